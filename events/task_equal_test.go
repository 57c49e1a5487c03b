package events

import (
	"reflect"
	"testing"
	"time"
)

// TestTaskEqualSeesEveryField: changing any one field of a Task makes it
// unequal, so a field added later cannot be forgotten by Equal.
func TestTaskEqualSeesEveryField(t *testing.T) {
	base := Task{ID: "t", Name: "n", Cwd: "/c", Port: 1, Status: StatusIdle,
		Created: time.Unix(1, 0), Updated: time.Unix(2, 0), WebSearch: false,
		QueuedMessages: []QueuedMessage{{ID: "q", Text: "x"}}, Model: "m"}
	if !base.Equal(base) {
		t.Fatal("a task differs from itself")
	}
	rt := reflect.TypeOf(base)
	for i := range rt.NumField() {
		other := base
		other.QueuedMessages = []QueuedMessage{{ID: "q", Text: "x"}}
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "!")
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Float64:
			f.SetFloat(f.Float() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Slice:
			f.Set(reflect.Zero(f.Type()))
		case reflect.Struct:
			f.Set(reflect.ValueOf(time.Unix(99, 0)))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", rt.Field(i).Name, f.Kind())
		}
		if base.Equal(other) {
			t.Errorf("changing %s leaves the task equal", rt.Field(i).Name)
		}
	}
	a := base
	a.QueuedMessages = []QueuedMessage{}
	b := base
	b.QueuedMessages = nil
	if a.Equal(b) {
		t.Error("an empty queue equals a missing one")
	}
	if !EqualTasks([]Task{base}, []Task{base}) || EqualTasks([]Task{base}, []Task{base, base}) {
		t.Error("EqualTasks")
	}
}

// TestTaskMergeCost: an update without a cost keeps the session's known
// one; an update with one replaces it.
func TestTaskMergeCost(t *testing.T) {
	known := Task{ID: "t", Tokens: 10, Cost: 0.25, HasCost: true}
	if got := known.Merge(Task{ID: "t", Status: StatusIdle}); !got.HasCost || got.Cost != 0.25 || got.Tokens != 10 {
		t.Errorf("a partial update lost the cost: %+v", got)
	}
	if got := known.Merge(Task{ID: "t", Cost: 0.5, HasCost: true}); got.Cost != 0.5 {
		t.Errorf("a new cost is not taken: %+v", got)
	}
}
