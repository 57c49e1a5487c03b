package outbox

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"
)

// FuzzQueue runs random operation sequences on a Queue and checks its
// invariants after every step:
//   - order: the pending messages keep their relative order, except for
//     the user's moves and the cancel recovery's inserts at the front,
//   - nothing is lost: every message ever added is pending, sent, or was
//     dropped by the user,
//   - at most one delivery: a message is marked sent at most once, only
//     from Sending, and Next only offers held messages,
//   - the journal: replaying the records gives the same queue, and a
//     journal cut anywhere gives the state after its last whole line.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{0, 1, 0, 2, 0, 3, 4, 1, 5, 0, 6, 2, 3, 0, 7, 1, 8, 1})
	f.Add(bytes.Repeat([]byte{0, 5, 1, 6, 2, 7, 3, 9, 4, 10}, 8))
	f.Fuzz(func(t *testing.T, prog []byte) {
		q := NewQueue()
		var order []string // the model of the pending order
		dropped := map[string]bool{}
		sentCount := map[string]int{}
		var added []string
		var journal bytes.Buffer
		var lineEnds []int  // journal offset after each line
		var states []*Queue // the queue after each line
		now := t0
		pick := func(i int, b byte) string {
			if len(added) == 0 {
				return "nope00"
			}
			return added[int(b)%len(added)]
		}
		for i := 0; i+1 < len(prog); i += 2 {
			op, arg := prog[i]%13, prog[i+1]
			now = now.Add(time.Second)
			id := pick(i, arg)
			before, _ := q.Get(id)
			var err error
			switch op {
			case 0, 1:
				intent := IntentHold
				if op == 1 {
					intent = IntentSend
				}
				var m Message
				m, err = q.Add(fmt.Sprintf("text %d ✓\n\x00\u2028", i), intent, arg%2 == 0, now)
				if err == nil {
					added = append(added, m.ID)
					order = append(order, m.ID)
				}
			case 2:
				err = q.Edit(id, fmt.Sprintf("edited %d «%d»", i, arg))
			case 3:
				pos := int(arg) % (len(order) + 1)
				err = q.Move(id, pos)
				if err == nil {
					j := slices.Index(order, id)
					order = slices.Delete(order, j, j+1)
					pos = min(pos, len(order))
					order = slices.Insert(order, pos, id)
				}
			case 4:
				err = q.Drop(id, arg%4 == 0)
				if err == nil {
					dropped[id] = true
					j := slices.Index(order, id)
					order = slices.Delete(order, j, j+1)
				}
			case 5:
				err = q.MarkSending(id, now)
			case 6:
				err = q.MarkSent(id, fmt.Sprint("d", i), arg%2 == 0, arg%3 == 0, now)
				if err == nil {
					if before.State != Sending {
						t.Fatalf("sent from %s", before.State)
					}
					sentCount[id]++
					j := slices.Index(order, id)
					order = slices.Delete(order, j, j+1)
				}
			case 7:
				err = q.MarkFailed(id, []Outcome{OutcomeRetry, OutcomePermanent, OutcomeUnknown}[arg%3], "reason")
			case 8:
				err = q.Release(id)
			case 9:
				err = q.Requeue(id)
			case 10:
				err = q.SetPaused(arg%2 == 0)
			case 11:
				var ms []Message
				n := int(arg % 4)
				ts := make([]string, n)
				for k := range ts {
					ts[k] = fmt.Sprintf("recovered %d.%d", i, k)
				}
				ms, err = q.RecoverFromCancel(ts, now)
				if err == nil {
					for k, m := range ms {
						added = append(added, m.ID)
						order = slices.Insert(order, k, m.ID)
					}
					if n > 0 && !q.Paused() {
						t.Fatal("recovery did not pause")
					}
				}
			case 12:
				mode := Mode(arg % 2)
				if m, ok := q.Next(mode); ok {
					if m.State != Held {
						t.Fatalf("Next offered a %s message", m.State)
					}
					if m.Intent != IntentSend && (mode == Busy || q.Paused()) {
						t.Fatalf("Next offered a held message while %v/paused=%v", mode, q.Paused())
					}
				}
			}
			_ = err
			// The records of this step, as one journal line.
			if recs := q.TakeRecords(); len(recs) > 0 {
				line, err := encodeLine(recs)
				if err != nil {
					t.Fatal(err)
				}
				journal.Write(line)
				lineEnds = append(lineEnds, journal.Len())
				states = append(states, q.Clone())
			}
			// Invariants.
			var got []string
			for _, m := range q.Pending() {
				got = append(got, m.ID)
			}
			if !slices.Equal(got, order) {
				t.Fatalf("step %d op %d: order %v, model %v", i, op, got, order)
			}
			for _, a := range added {
				_, pending := q.Get(a)
				if !pending && !dropped[a] {
					t.Fatalf("message %s lost", a)
				}
				if sentCount[a] > 1 {
					t.Fatalf("message %s sent %d times", a, sentCount[a])
				}
			}
			if len(q.History()) != len(sentCount) {
				t.Fatalf("history %d, sent %d", len(q.History()), len(sentCount))
			}
		}
		// Replay gives the same queue; a cut journal gives a prefix.
		r, st := replay(journal.Bytes())
		if st.damaged != 0 || r.Rejected != 0 || !sameQueue(q, r) {
			t.Fatalf("replay differs (damaged %d, rejected %d)", st.damaged, r.Rejected)
		}
		data := journal.Bytes()
		for _, cut := range []int{len(data) / 3, len(data) / 2, len(data) - 1} {
			if cut <= 0 {
				continue
			}
			r, _ := replay(data[:cut])
			// A line whose newline alone is missing is whole.
			k := 0
			for k < len(lineEnds) && lineEnds[k]-1 <= cut {
				k++
			}
			want := NewQueue()
			if k > 0 {
				want = states[k-1]
			}
			if !sameQueue(r, want) {
				t.Fatalf("journal cut at %d of %d: not the state after line %d", cut, len(data), k)
			}
		}
	})
}
