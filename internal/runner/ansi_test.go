package runner

import "testing"

func TestStripANSI(t *testing.T) {
	testCases := []struct {
		name string
		in   string
		want string
	}{
		{name: "plain text is untouched", in: "Error: Invalid reference\n", want: "Error: Invalid reference\n"},
		{name: "colour, bold and reset", in: "\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1mBoom\x1b[0m", want: "Error: Boom"},
		{name: "CSI with parameters", in: "\x1b[38;5;196mred\x1b[0;1;4m!\x1b[K", want: "red!"},
		{name: "CSI with private marker", in: "\x1b[?25lhidden cursor\x1b[?25h", want: "hidden cursor"},
		{name: "OSC terminated by BEL", in: "\x1b]0;window title\x07Error: x", want: "Error: x"},
		{name: "OSC hyperlink terminated by ST", in: "see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\.", want: "see the docs."},
		{name: "unterminated OSC stops at the end of its line", in: "\x1b]0;title\nError: kept", want: "\nError: kept"},
		{name: "charset selection", in: "\x1b(Bplain\x1b)0", want: "plain"},
		{name: "two-byte escape", in: "\x1bMup\x1b7saved\x1b8", want: "upsaved"},
		{name: "carriage return starts a new line", in: "progress 10%\rError: late\r\nnext", want: "progress 10%\nError: late\nnext"},
		{name: "other control characters go, tabs stay", in: "a\x00b\x08c\td\x7f", want: "abc\td"},
		{name: "a lone ESC at the end", in: "text\x1b", want: "text"},
		{name: "box drawing and UTF-8 survive", in: "\x1b[31m│\x1b[0m \x1b[0mÉrror ✓", want: "│ Érror ✓"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripANSI(tc.in); got != tc.want {
				t.Errorf("StripANSI(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
