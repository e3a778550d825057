package kubectlplugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// masked replaces the value of a sensitive output.
const masked = `"(sensitive)"`

// maskSensitiveOutputs returns the state with the value of every output
// marked sensitive replaced by "(sensitive)", and every other byte exactly
// as the runtime wrote it.
func maskSensitiveOutputs(raw []byte) ([]byte, error) {
	spans, err := sensitiveValues(raw)
	if err != nil {
		return nil, fmt.Errorf("reading the state's outputs: %w", err)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] > spans[j][0] })
	out := bytes.Clone(raw)
	for _, s := range spans {
		out = append(out[:s[0]], append([]byte(masked), out[s[1]:]...)...)
	}
	return out, nil
}

// sensitiveValues finds the byte ranges of the values of sensitive outputs.
func sensitiveValues(raw []byte) ([][2]int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var spans [][2]int
	err := eachMember(dec, func(key string) error {
		if key != "outputs" {
			return skip(dec)
		}
		return eachMember(dec, func(string) error {
			var output json.RawMessage
			if err := dec.Decode(&output); err != nil {
				return err
			}
			start := int(dec.InputOffset()) - len(output)
			span, sensitive, err := outputValue(output)
			if err != nil || !sensitive || span[1] == 0 {
				return err
			}
			spans = append(spans, [2]int{start + span[0], start + span[1]})
			return nil
		})
	})
	return spans, err
}

// outputValue finds the range of an output object's value and whether the
// output is sensitive.
func outputValue(output []byte) ([2]int, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(output))
	var span [2]int
	sensitive := false
	err := eachMember(dec, func(key string) error {
		switch key {
		case "value":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			end := int(dec.InputOffset())
			span = [2]int{end - len(v), end}
			return nil
		case "sensitive":
			return dec.Decode(&sensitive)
		default:
			return skip(dec)
		}
	})
	return span, sensitive, err
}

// eachMember calls f for each key of the object the decoder is at; f must
// consume the member's value.
func eachMember(dec *json.Decoder, f func(key string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("object key is not a string")
		}
		if err := f(key); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing brace
	return err
}

func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}
