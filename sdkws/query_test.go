package sdkws

import (
	"encoding/hex"
	"net/url"
	"testing"
	"time"
)

// signFor builds a SigV4 query as the C++ SDK would: values RFC 3986-encoded, unsorted and
// concatenated raw, the credential pre-encoded (protocol §1.2, §1.3).
func signFor(t *testing.T, host, fleet, pid, secret string, at time.Time) string {
	t.Helper()
	s := &sigV4{date: at.Format("20060102"), region: "us-west-2", service: "gamelift"}
	dt := at.Format("20060102T150405Z")
	q := query{"computeid": host, "fleetid": fleet, "pid": pid}
	sig := signSDKQuery(signingKey(secret, s.date, s.region, s.service), dt, s, q, rfc3986Escape)
	return "ComputeId=" + rfc3986Escape(host) + "&FleetId=" + fleet + "&pID=" + pid +
		"&Authorization=SigV4&X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Credential=" + rfc3986Escape("AKID/"+s.date+"/us-west-2/gamelift/aws4_request") +
		"&X-Amz-Date=" + dt + "&X-Amz-Signature=" + hex.EncodeToString(sig) +
		"&X-Amz-Security-Token=" + rfc3986Escape("tok+/=")
}

func TestSigV4Variant(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	keys := func(id string) (string, bool) { return "SECRET", id == "AKID" }
	// A host ID with a "/" segment is encoded differently by the two encoders only if it
	// had a space; both must verify.
	good := signFor(t, "host-1/sub", "fleet-1", "p 1", "SECRET", now)
	if _, err := verifySigV4(parseQuery(good), keys, now.Add(time.Minute), 15*time.Minute); err != nil {
		t.Fatalf("C++-style query: %v", err)
	}
	if _, err := verifySigV4(parseQuery(good), keys, now.Add(20*time.Minute), 15*time.Minute); err == nil {
		t.Error("stale signature accepted")
	}
	if _, err := verifySigV4(parseQuery(good), func(string) (string, bool) { return "OTHER", true }, now, time.Minute); err == nil {
		t.Error("wrong secret accepted")
	}
	tampered := parseQuery(good)
	tampered["pid"] = "p2"
	if _, err := verifySigV4(tampered, keys, now, time.Minute); err == nil {
		t.Error("tampered pID accepted")
	}
	// Go-style (url.Values.Encode) of the same signature parameters.
	q := parseQuery(good)
	v := url.Values{}
	for k, val := range map[string]string{"ComputeId": q["computeid"], "FleetId": q["fleetid"], "pID": q["pid"],
		"Authorization": "SigV4", "X-Amz-Credential": q["x-amz-credential"], "X-Amz-Date": q["x-amz-date"], "X-Amz-Signature": q["x-amz-signature"]} {
		v.Set(k, val)
	}
	if _, err := verifySigV4(parseQuery(v.Encode()), keys, now, time.Minute); err != nil {
		t.Errorf("Go-style query: %v", err)
	}
}

func TestParseQueryKeepsInvalidEscapes(t *testing.T) {
	q := parseQuery("pID=100%&FleetId=a%2Fb&pid=second&&x")
	if q.get("pID") != "100%" || q.get("FleetId") != "a/b" || q.get("x") != "" {
		t.Errorf("parsed %v", q)
	}
}
