package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"sync"
)

// maxCachedKeys bounds the signing-key cache. A key is cached only after it verified a
// request, so the cache holds one entry per (key, day, region, service) actually in use.
const maxCachedKeys = 256

// cacheKey identifies a derived signing key.
type cacheKey struct{ secret, date, region, service string }

// keyCache remembers derived signing keys. Its zero value is ready to use.
type keyCache struct {
	mu sync.RWMutex
	m  map[cacheKey][32]byte
}

// get returns the cached signing key, if any.
func (c *keyCache) get(k cacheKey) ([32]byte, bool) {
	c.mu.RLock()
	key, ok := c.m[k]
	c.mu.RUnlock()
	return key, ok
}

// put caches a signing key, evicting an arbitrary entry when the cache is full.
func (c *keyCache) put(k cacheKey, key [32]byte) {
	k = cacheKey{k.secret, strings.Clone(k.date), strings.Clone(k.region), strings.Clone(k.service)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[cacheKey][32]byte)
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= maxCachedKeys {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = key
}

// len returns the number of cached keys.
func (c *keyCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// deriveKey computes the SigV4 signing key:
// HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
func deriveKey(k cacheKey) [32]byte {
	key := hmacSum([]byte("AWS4"+k.secret), k.date)
	key = hmacSum(key, k.region)
	key = hmacSum(key, k.service)
	key = hmacSum(key, terminator)
	var out [32]byte
	copy(out[:], key)
	return out
}

// hmacSum returns HMAC-SHA256(key, msg).
func hmacSum(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// hmacPadded returns HMAC-SHA256(key, msg) (RFC 2104) where buf is 64 spare bytes followed by
// msg; the spare bytes are overwritten with the inner pad. Unlike crypto/hmac it does not
// allocate.
func hmacPadded(key *[32]byte, buf []byte) [32]byte {
	const blockSize = 64
	var outer [blockSize + sha256.Size]byte
	for i := 0; i < blockSize; i++ {
		var k byte
		if i < len(key) {
			k = key[i]
		}
		buf[i] = k ^ 0x36
		outer[i] = k ^ 0x5c
	}
	inner := sha256.Sum256(buf)
	copy(outer[blockSize:], inner[:])
	return sha256.Sum256(outer[:])
}
