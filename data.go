package zkcoord

import (
	"encoding/json"
	"fmt"
)

// DecodeJSON decodes the JSON data of a znode into a value of type V.
// Empty data is the zero value: a node created without data (by another
// client, or before its first write) holds nothing yet. Data that is not
// V's JSON gives an error wrapping ErrBadData that names the node by what.
func DecodeJSON[V any](data []byte, what string) (V, error) {
	var v V
	if len(data) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var zero V
		return zero, fmt.Errorf("%w: %s: %w", ErrBadData, what, err)
	}
	return v, nil
}
