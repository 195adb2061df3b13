package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/causalctl/causalctl/internal/record"
	"strconv"
)

// Gap is the record package's (record.Gap): offsets deleted before they
// were read, on a position line.
type Gap = record.Gap

// check refuses a gap no position line can carry at offset pos.
func checkGap(g *Gap, pos int64) error {
	switch {
	case g.From < 0:
		return fmt.Errorf("gap from a negative offset %d", g.From)
	case g.From >= g.To:
		return fmt.Errorf("gap from %d to %d is empty", g.From, g.To)
	case g.To != pos:
		return fmt.Errorf("gap to %d on a position line at %d: a gap ends at the position", g.To, pos)
	}
	return nil
}

// appendGap appends the gap field of a position line.
func appendGap(b []byte, g *Gap) []byte {
	b = append(b, `,"gap":{"from":`...)
	b = strconv.AppendInt(b, g.From, 10)
	b = append(b, `,"to":`...)
	b = strconv.AppendInt(b, g.To, 10)
	return append(b, '}')
}

// decodeGap decodes the value of a gap field: both offsets required, no
// other field.
func decodeGap(raw []byte) (*Gap, error) {
	var v struct{ From, To *int64 }
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v.From == nil || v.To == nil {
		return nil, errors.New(`want {"from": OFFSET, "to": OFFSET}`)
	}
	return &Gap{From: *v.From, To: *v.To}, nil
}
