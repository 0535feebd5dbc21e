package gamelift

import (
	"context"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// maxTags is AWS's limit of user tags on one resource (the model allows 200 per request).
const maxTags = 50

// tag is a stored tag.
type tag struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}

// tagged is embedded in every taggable document.
type tagged struct {
	Tags []tag `json:"tags,omitempty"`
}

func (t *tagged) tagList() *[]tag { return &t.Tags }

// taggable is a document with tags.
type taggable interface{ tagList() *[]tag }

// taggableKinds maps an ARN resource type to its store kind and an empty document.
var taggableKinds = map[string]struct {
	kind string
	doc  func() taggable
}{
	arnAlias:           {kindAlias, func() taggable { return new(aliasDoc) }},
	arnBuild:           {kindBuild, func() taggable { return new(buildDoc) }},
	arnLocation:        {kindLocation, func() taggable { return new(locationDoc) }},
	arnGameServerGroup: {kindGameServerGroup, func() taggable { return new(groupDoc) }},
	arnFleet:           {kindFleet, func() taggable { return new(fleetDoc) }},
	arnQueue:           {kindQueue, func() taggable { return new(queueDoc) }},
	arnRuleSet:         {kindRuleSet, func() taggable { return new(ruleSetDoc) }},
	arnMatchConfig:     {kindMatchConfig, func() taggable { return new(matchConfigDoc) }},
}

// reservedKey reports whether key uses the prefix AWS keeps for itself.
func reservedKey(key string) bool { return strings.HasPrefix(strings.ToLower(key), "aws:") }

// mergeTags returns have with add applied: an existing key takes the new value, a new key is
// appended. It enforces AWS's rules: no "aws:" keys, at most maxTags tags.
func mergeTags(have []tag, add []api.Tag) ([]tag, error) {
	out := append([]tag(nil), have...)
	for _, t := range add {
		k, v := api.Deref(t.Key), api.Deref(t.Value)
		if reservedKey(k) {
			return nil, api.Errorf(api.TaggingFailedException,
				"Tag key %q is invalid: the prefix 'aws:' is reserved for AWS use.", k)
		}
		out = setTag(out, k, v)
	}
	if len(out) > maxTags {
		return nil, api.Errorf(api.TaggingFailedException,
			"A resource can have at most %d tags; the request would give it %d.", maxTags, len(out))
	}
	return out, nil
}

func setTag(tags []tag, k, v string) []tag {
	for i := range tags {
		if tags[i].Key == k {
			tags[i].Value = v
			return tags
		}
	}
	return append(tags, tag{Key: k, Value: v})
}

// removeTags returns have without keys; keys not present are ignored, as in GameLift.
func removeTags(have []tag, keys []string) ([]tag, error) {
	drop := make(map[string]bool, len(keys))
	for _, k := range keys {
		if reservedKey(k) {
			return nil, api.Errorf(api.TaggingFailedException,
				"Tag key %q cannot be removed: the prefix 'aws:' is reserved for AWS use.", k)
		}
		drop[k] = true
	}
	out := make([]tag, 0, len(have))
	for _, t := range have {
		if !drop[t.Key] {
			out = append(out, t)
		}
	}
	return out, nil
}

// apiTags converts stored tags to the API shape; never nil.
func apiTags(tags []tag) []api.Tag {
	out := make([]api.Tag, len(tags))
	for i, t := range tags {
		out[i] = api.Tag{Key: api.String(t.Key), Value: api.String(t.Value)}
	}
	return out
}

func (s *Service) tagHandlers(h *api.Handlers) {
	h.TagResource = s.TagResource
	h.UntagResource = s.UntagResource
	h.ListTagsForResource = s.ListTagsForResource
}

// TagResource adds tags to, or changes tags of, the resource an ARN names.
func (s *Service) TagResource(ctx context.Context, in *api.TagResourceRequest) (*api.TagResourceResponse, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		return s.editTags(tx, api.Deref(in.ResourceARN), func(have []tag) ([]tag, error) {
			return mergeTags(have, in.Tags)
		})
	})
	if err != nil {
		return nil, err
	}
	return &api.TagResourceResponse{}, nil
}

// UntagResource removes tags by key from the resource an ARN names.
func (s *Service) UntagResource(ctx context.Context, in *api.UntagResourceRequest) (*api.UntagResourceResponse, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		return s.editTags(tx, api.Deref(in.ResourceARN), func(have []tag) ([]tag, error) {
			return removeTags(have, in.TagKeys)
		})
	})
	if err != nil {
		return nil, err
	}
	return &api.UntagResourceResponse{}, nil
}

// ListTagsForResource returns the tags of the resource an ARN names.
func (s *Service) ListTagsForResource(ctx context.Context, in *api.ListTagsForResourceRequest) (*api.ListTagsForResourceResponse, error) {
	var tags []tag
	err := s.view(ctx, func(tx store.Tx) error {
		_, doc, err := s.loadTaggable(tx, api.Deref(in.ResourceARN))
		if err == nil {
			tags = *doc.tagList()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.ListTagsForResourceResponse{Tags: apiTags(tags)}, nil
}

// editTags replaces the tags of the resource named by rawARN with edit's result.
func (s *Service) editTags(tx store.Tx, rawARN string, edit func([]tag) ([]tag, error)) error {
	rec, doc, err := s.loadTaggable(tx, rawARN)
	if err != nil {
		return err
	}
	tags, err := edit(*doc.tagList())
	if err != nil {
		return err
	}
	*doc.tagList() = tags
	return putDoc(tx, rec, doc)
}

// loadTaggable reads the resource an ARN names. A malformed ARN, or one of another Region,
// is an InvalidRequestException; a well-formed ARN naming nothing here is a NotFoundException.
func (s *Service) loadTaggable(tx store.Tx, rawARN string) (*store.Record, taggable, error) {
	a, ok := parseARN(rawARN)
	if !ok {
		return nil, nil, api.Errorf(api.InvalidRequestException, "Invalid resource ARN: %s", rawARN)
	}
	if err := s.checkOwner(a, rawARN); err != nil {
		return nil, nil, err
	}
	notFound := func() error {
		return api.Errorf(api.NotFoundException, "Resource %s not found.", rawARN)
	}
	k, ok := taggableKinds[a.ResourceType]
	if !ok {
		return nil, nil, notFound()
	}
	doc := k.doc()
	rec, err := getDoc(tx, k.kind, a.ID, doc, notFound)
	if err != nil {
		return nil, nil, err
	}
	return rec, doc, nil
}
