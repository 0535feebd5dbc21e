package httpapi

import (
	"crypto/rand"
	"encoding/binary"
	"sync/atomic"

	"github.com/google/uuid"
)

// idGenerator makes request IDs: version-4-formatted UUIDs that are unique within a process
// (a counter through a bijective mix) and across processes (a random base), at the cost of an
// atomic add instead of a read from the system's random source per request. They are
// identifiers, not secrets.
type idGenerator struct {
	base    uuid.UUID
	counter atomic.Uint64
}

func newIDGenerator() *idGenerator {
	g := &idGenerator{}
	if _, err := rand.Read(g.base[:]); err != nil {
		panic("httpapi: no randomness for request IDs: " + err.Error())
	}
	return g
}

// next returns a fresh request ID.
func (g *idGenerator) next() string {
	m := mix(g.counter.Add(1))
	id := g.base
	// Bytes 6-9 hold the version and variant bits; the 64 mixed bits go around them.
	hi := binary.BigEndian.Uint64(id[0:8]) ^ (m & 0xffffffffffff0000)
	binary.BigEndian.PutUint64(id[0:8], hi)
	lo := binary.BigEndian.Uint16(id[10:12]) ^ uint16(m)
	binary.BigEndian.PutUint16(id[10:12], lo)
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id.String()
}

// mix is SplitMix64's finalizer, a bijection on uint64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
