package api

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestOperationTableMatchesModel(t *testing.T) {
	m := loadModel(t)
	if len(Operations) != len(m.Operations) || len(Operations) != 120 {
		t.Fatalf("table has %d operations, model %d, want 120", len(Operations), len(m.Operations))
	}
	names := make([]string, len(Operations))
	for i := range Operations {
		names[i] = Operations[i].Name
	}
	if !slices.IsSorted(names) {
		t.Error("Operations is not in name order")
	}
	for i := range Operations {
		op := &Operations[i]
		mo, ok := m.Operations[op.Name]
		if !ok {
			t.Errorf("%s is not in the model", op.Name)
			continue
		}
		if got := LookupOperation(op.Name); got != op {
			t.Errorf("LookupOperation(%s) = %p, want %p", op.Name, got, op)
		}
		in := reflect.TypeOf(op.NewInput())
		if in.Kind() != reflect.Pointer || in.Elem().Name() != mo.Input.Shape {
			t.Errorf("%s: NewInput returns %v, want *%s", op.Name, in, mo.Input.Shape)
		}
		var errs []ErrorCode
		for _, e := range mo.Errors {
			errs = append(errs, ErrorCode(e.Shape))
		}
		if !slices.Equal(op.Errors, errs) {
			t.Errorf("%s: Errors = %v, model %v", op.Name, op.Errors, errs)
		}
		_, next := m.Shapes[mo.Input.Shape].Members["NextToken"]
		if op.Paginated != next {
			t.Errorf("%s: Paginated = %v, model input has NextToken: %v", op.Name, op.Paginated, next)
		}
	}
	if LookupOperation("NoSuchOperation") != nil || LookupOperation("") != nil {
		t.Error("LookupOperation of an unknown name is not nil")
	}
}

// TestHandlersMatchModel checks Handlers has one field per operation, in name order, whose
// function type takes the model's input and returns its output (or an empty struct when the
// model has no output shape).
func TestHandlersMatchModel(t *testing.T) {
	m := loadModel(t)
	ht := reflect.TypeFor[Handlers]()
	if ht.NumField() != len(Operations) {
		t.Fatalf("Handlers has %d fields, want %d", ht.NumField(), len(Operations))
	}
	for i := range ht.NumField() {
		f := ht.Field(i)
		if f.Name != Operations[i].Name {
			t.Errorf("Handlers field %d is %s, want %s", i, f.Name, Operations[i].Name)
			continue
		}
		mo := m.Operations[f.Name]
		ft := f.Type
		if ft.Kind() != reflect.Func || ft.NumIn() != 2 || ft.NumOut() != 2 {
			t.Errorf("%s: handler type %v", f.Name, ft)
			continue
		}
		if got := ft.In(1).Elem().Name(); got != mo.Input.Shape {
			t.Errorf("%s: handler takes *%s, model input %s", f.Name, got, mo.Input.Shape)
		}
		out := ft.Out(0).Elem()
		want := f.Name + "Output"
		if mo.Output != nil {
			want = mo.Output.Shape
		} else if out.NumField() != 0 {
			t.Errorf("%s: generated output %s has fields", f.Name, out.Name())
		}
		if out.Name() != want {
			t.Errorf("%s: handler returns *%s, want *%s", f.Name, out.Name(), want)
		}
	}
}

func TestBindUnimplemented(t *testing.T) {
	for _, h := range []*Handlers{{}, nil} {
		for i := range Operations {
			op := &Operations[i]
			fn, ok := op.Bind(h)
			if ok {
				t.Errorf("%s: implemented in empty Handlers", op.Name)
			}
			out, err := fn(context.Background(), op.NewInput())
			var e *Error
			if out != nil || !errors.As(err, &e) || e.Code != NotImplementedException || !strings.Contains(e.Message, op.Name) {
				t.Errorf("%s: got (%v, %v), want NotImplementedException naming it", op.Name, out, err)
			}
		}
	}
}

// TestBindCallsHandler sets every Handlers field to a function that records its input and
// returns a fresh output, and checks each bound handler reaches its own field.
func TestBindCallsHandler(t *testing.T) {
	var h Handlers
	hv := reflect.ValueOf(&h).Elem()
	var called string
	var gotIn any
	for i := range hv.NumField() {
		name, ft := hv.Type().Field(i).Name, hv.Field(i).Type()
		hv.Field(i).Set(reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
			called, gotIn = name, args[1].Interface()
			return []reflect.Value{reflect.New(ft.Out(0).Elem()), reflect.Zero(ft.Out(1))}
		}))
	}
	for i := range Operations {
		op := &Operations[i]
		fn, ok := op.Bind(&h)
		if !ok {
			t.Errorf("%s: not implemented", op.Name)
			continue
		}
		in := op.NewInput()
		out, err := fn(context.Background(), in)
		if err != nil || called != op.Name || gotIn != in {
			t.Errorf("%s: called %s with %v, err %v", op.Name, called, gotIn, err)
		}
		if want := reflect.TypeOf(fn).Out(0); out == nil || !reflect.TypeOf(out).Implements(want) {
			t.Errorf("%s: output %T", op.Name, out)
		}
	}
}

func TestBindTypedHandler(t *testing.T) {
	want := &CreateAliasOutput{Alias: &Alias{AliasId: String("alias-1")}}
	h := &Handlers{CreateAlias: func(_ context.Context, in *CreateAliasInput) (*CreateAliasOutput, error) {
		if Deref(in.Name) != "a" {
			t.Errorf("handler got name %q", Deref(in.Name))
		}
		return want, nil
	}}
	fn, ok := LookupOperation("CreateAlias").Bind(h)
	if !ok {
		t.Fatal("CreateAlias not implemented")
	}
	out, err := fn(context.Background(), &CreateAliasInput{Name: String("a")})
	if err != nil || out != any(want) {
		t.Errorf("got (%v, %v)", out, err)
	}
	// The typed-nil trap documented on Handlers: a nil *Output arrives as a non-nil any.
	h.CreateAlias = func(context.Context, *CreateAliasInput) (*CreateAliasOutput, error) { return nil, nil }
	fn, _ = LookupOperation("CreateAlias").Bind(h)
	out, _ = fn(context.Background(), &CreateAliasInput{})
	if out == nil || out.(*CreateAliasOutput) != nil {
		t.Errorf("nil output erased to %#v", out)
	}
}
