package events

import (
	"encoding/json"

	"github.com/perch-tui/perch/jsonx"
)

// results.go's short names for jsonx's readers (they lived beside maria's
// decoder until it moved to backend/maria).

type rawJSON = jsonx.Raw

func isNull(raw []byte) bool { return jsonx.IsNull(raw) }

func str(raw []byte) string { return jsonx.String(raw) }

func jsonInt(raw []byte) int64 { return jsonx.Int(raw) }

func idString(raw []byte) string { return jsonx.ID(raw) }

func compact(raw []byte) json.RawMessage { return jsonx.Compact(raw) }
