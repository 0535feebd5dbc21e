package api

import (
	"slices"
	"testing"
)

func TestErrorTable(t *testing.T) {
	m := loadModel(t)
	n := 0
	for name, s := range m.Shapes {
		if !s.Exception {
			continue
		}
		n++
		c := ErrorCode(name)
		wantStatus := 400
		if s.Fault {
			wantStatus = 500
		}
		if !c.Known() || c.Status() != wantStatus || c.Fault() != s.Fault {
			t.Errorf("%s: known %v status %d fault %v; want known, %d, %v", c, c.Known(), c.Status(), c.Fault(), wantStatus, s.Fault)
		}
	}
	if n != 16 || len(modeledErrors) != n {
		t.Errorf("model has %d exceptions, table %d, want 16", n, len(modeledErrors))
	}
	if !InternalServiceException.Fault() || InternalServiceException.Status() != 500 {
		t.Error("InternalServiceException is not a 500 fault")
	}
	for c := range unmodeledErrors {
		wantStatus, wantFault := 400, false
		if c == ServiceUnavailableException {
			wantStatus, wantFault = 503, true // the one unmodeled fault: clients retry it
		}
		if !c.Known() || c.Status() != wantStatus || c.Fault() != wantFault {
			t.Errorf("%s: known %v status %d fault %v", c, c.Known(), c.Status(), c.Fault())
		}
		if _, dup := modeledErrors[c]; dup {
			t.Errorf("%s is both modeled and unmodeled", c)
		}
	}
	if unknown := ErrorCode("NoSuchException"); unknown.Known() || unknown.Status() != 500 || !unknown.Fault() {
		t.Error("an unknown code is not an unknown 500 fault")
	}
}

func TestOperationErrorsKnown(t *testing.T) {
	for _, op := range Operations {
		for _, c := range op.Errors {
			if !c.Known() {
				t.Errorf("%s: error %s is not in the error table", op.Name, c)
			}
		}
		if !slices.Contains(op.Errors, InternalServiceException) {
			t.Errorf("%s: InternalServiceException missing", op.Name)
		}
	}
}
