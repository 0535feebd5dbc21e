package sigv4

import (
	"testing"
)

func benchVerify(b *testing.B, sp reqSpec) {
	v, _ := newVerifier()
	r := sp.serverRequest(b)
	if _, err := v.Verify(r, sp.body); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Verify(r, sp.body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyJSON verifies a typical AWS CLI request (awsJson1_1).
func BenchmarkVerifyJSON(b *testing.B) { benchVerify(b, jsonRequest()) }

// BenchmarkVerifyCBOR verifies a typical Go SDK v2 request (rpcv2Cbor).
func BenchmarkVerifyCBOR(b *testing.B) {
	benchVerify(b, cborRequest("/service/GameLift/operation/DescribeAlias"))
}

// BenchmarkVerifyCBORParallel verifies from all cores at once (cache and pool contention).
func BenchmarkVerifyCBORParallel(b *testing.B) {
	v, _ := newVerifier()
	sp := cborRequest("/service/GameLift/operation/DescribeAlias")
	r := sp.serverRequest(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(r, sp.body); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkVerifyUncachedKey measures a verification that derives its signing key.
func BenchmarkVerifyUncachedKey(b *testing.B) {
	sp := cborRequest("/service/GameLift/operation/DescribeAlias")
	r := sp.serverRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		v, _ := newVerifier()
		if _, err := v.Verify(r, sp.body); err != nil {
			b.Fatal(err)
		}
	}
}
