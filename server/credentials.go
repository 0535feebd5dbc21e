package server

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Credentials is the key pair clients sign their requests with.
type Credentials struct {
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string `json:"SecretAccessKey"`
}

// credentialsFile is where a generated key pair is kept inside the data directory.
const credentialsFile = "credentials.json"

// loadOrCreateCredentials returns the key pair stored in dir, creating and storing a new one
// when there is none. created reports whether it was made now.
func loadOrCreateCredentials(dir string) (c Credentials, created bool, err error) {
	path := filepath.Join(dir, credentialsFile)
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &c); err != nil || c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return c, false, fmt.Errorf("%s is not a valid credentials file; remove it to generate a new key pair", path)
		}
		return c, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return c, false, err
	}
	c = Credentials{AccessKeyID: "AKIA" + randomString(16, upperAlnum), SecretAccessKey: randomString(40, secretChars)}
	b, _ = json.MarshalIndent(c, "", "  ")
	if err := writeFileAtomic(path, append(b, '\n'), 0o600); err != nil {
		return c, false, err
	}
	return c, true, nil
}

const (
	upperAlnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	secretChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// randomString returns n characters drawn uniformly from alphabet (whose length divides 256).
func randomString(n int, alphabet string) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// writeFileAtomic writes data to a temporary file, syncs it and renames it over path.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
