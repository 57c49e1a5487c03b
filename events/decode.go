package events

// Decode turns one SSE frame into an Event. It never fails: data that does
// not decode becomes a KindInvalid event whose Notice carries a short excerpt.
func Decode(f Frame) Event {
	return Event{Kind: KindInvalid, Notice: "decoder not written yet"}
}
