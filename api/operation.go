package api

import "context"

// HandlerFunc is an operation's handler with its types erased: in is a pointer to the
// operation's generated input type and out a pointer to its output type (a nil pointer encodes
// as an empty structure).
type HandlerFunc func(ctx context.Context, in any) (out any, err error)

// Operation is one row of the operation table (zz_operations.go has all of them).
type Operation struct {
	// Name is the operation name as both protocols send it, e.g. "CreateAlias".
	Name string
	// Paginated reports whether the input has NextToken.
	Paginated bool
	// Errors lists the exceptions the model says the operation returns.
	Errors []ErrorCode
	// NewInput returns a new zero input, a pointer to the generated input type.
	NewInput func() any
	// bind returns the handler h holds for this operation, or nil when h has none.
	bind func(h *Handlers) HandlerFunc
}

// Bind returns the handler h holds for the operation. When h has none, the returned handler
// answers NotImplemented(op.Name) and implemented is false.
func (op *Operation) Bind(h *Handlers) (fn HandlerFunc, implemented bool) {
	if fn := op.bind(h); fn != nil {
		return fn, true
	}
	name := op.Name
	return func(context.Context, any) (any, error) { return nil, NotImplemented(name) }, false
}
