package bench

import (
	"encoding/json"
	"testing"
)

func TestExpand(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"Alias":{"AliasId":"alias-9","Tags":[{"Key":"k"}],"N":3}}`), &doc); err != nil {
		t.Fatal(err)
	}
	got, err := Expand(`{"AliasId":"{{Alias.AliasId}}","K":"{{ Alias.Tags.0.Key }}","N":{{Alias.N}}}`, doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"AliasId":"alias-9","K":"k","N":3}`; got != want {
		t.Errorf("Expand = %s, want %s", got, want)
	}
	for _, path := range []string{"Alias.Missing", "Alias.Tags.5.Key", "Alias.AliasId.X", "Alias.Tags.x"} {
		if _, err := Expand("{{"+path+"}}", doc); err == nil {
			t.Errorf("Expand({{%s}}) succeeded, want an error", path)
		}
	}
	if got, err := Expand(`{"A":"b"}`, nil); err != nil || got != `{"A":"b"}` {
		t.Errorf("a template without placeholders changed: %q, %v", got, err)
	}
}
