package cbor

import "errors"

// CBOR major types (RFC 8949 §3.1).
const (
	majorBytes = 2
	majorText  = 3
	majorArray = 4
	majorMap   = 5
	majorTag   = 6
)

// indefinite marks an open indefinite-length container on the scan stack.
const indefinite = -1

var (
	errTruncated   = errors.New("unexpected end of data")
	errTooDeep     = errors.New("data nested too deeply")
	errTooMany     = errors.New("too many data items")
	errBadArgument = errors.New("reserved additional information")
)

// checkItems walks the first data item of b without decoding it and fails when it holds more
// than max data items, nests deeper than MaxDepth, or declares lengths the body cannot hold.
// It bounds the work and memory of the real decode; well-formedness details beyond that (and
// trailing data) are left to the decoder, which reports them.
func checkItems(b []byte, max int) error {
	var buf [MaxDepth + 2]int
	stack := append(buf[:0], 1) // items still expected at each open level
	pos, items := 0, 0
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if *top == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		if pos >= len(b) {
			return errTruncated
		}
		if *top == indefinite && b[pos] == 0xff {
			pos++
			stack = stack[:len(stack)-1]
			continue
		}
		if *top > 0 {
			*top--
		}
		if items++; items > max {
			return errTooMany
		}
		open, next, err := scanHead(b, pos)
		if err != nil {
			return err
		}
		pos = next
		if open != 0 {
			if len(stack) > MaxDepth {
				return errTooDeep
			}
			stack = append(stack, open)
		}
	}
	return nil
}

// scanHead reads the data item whose initial byte is at b[pos]. It returns the number of items
// the item opens (0 for none, indefinite for an indefinite-length container) and the position
// after its head (after its content, for strings).
func scanHead(b []byte, pos int) (open, next int, err error) {
	major, ai := b[pos]>>5, b[pos]&0x1f
	pos++
	if ai == 31 {
		switch major {
		case majorBytes, majorText, majorArray, majorMap:
			return indefinite, pos, nil
		}
		return 0, 0, errBadArgument
	}
	n, pos, err := argument(b, pos, ai)
	if err != nil {
		return 0, 0, err
	}
	rest := uint64(len(b) - pos)
	switch major {
	case majorBytes, majorText:
		if n > rest {
			return 0, 0, errTruncated
		}
		return 0, pos + int(n), nil
	case majorArray:
		if n > rest {
			return 0, 0, errTruncated
		}
		return int(n), pos, nil
	case majorMap:
		if n > rest/2 {
			return 0, 0, errTruncated
		}
		return int(2 * n), pos, nil
	case majorTag:
		return 1, pos, nil
	}
	return 0, pos, nil // integers, simple values, floats
}

// argument reads the argument that additional information ai announces.
func argument(b []byte, pos int, ai byte) (n uint64, next int, err error) {
	if ai < 24 {
		return uint64(ai), pos, nil
	}
	if ai > 27 {
		return 0, 0, errBadArgument
	}
	size := 1 << (ai - 24)
	if len(b)-pos < size {
		return 0, 0, errTruncated
	}
	for _, c := range b[pos : pos+size] {
		n = n<<8 | uint64(c)
	}
	return n, pos + size, nil
}
