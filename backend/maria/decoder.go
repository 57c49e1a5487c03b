package maria

import "github.com/perch-tui/perch/events"

// Decoder is maria's stateful stream decoder: it drops what a reconnect's
// replay repeats and pairs the docs dialect's two reports of a reply (see
// events.MariaDecoder, which lives beside maria's wire decoding).
type Decoder = events.MariaDecoder

// NewDecoder returns a decoder for one task stream.
func NewDecoder() *Decoder { return events.NewMariaDecoder() }
