package gamelift

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Game session logs (docs/sessions.md, "Game session logs"). When a process that hosted a game
// session ends, the compute's agent zips the files at the process's LogPaths and uploads the
// zip; the server keeps the file and calls AcceptGameSessionLog, which records it:
//
//   - gamesessionlog: ID = the game session key: the session's stored log (file name, size,
//     upload time). Kept GameSessionLogRetention after the upload, then purged with its file.
//
// GetGameSessionLogUrl answers a pre-signed URL for it, made by the server (LogURLSigner): the
// domain knows neither the listener nor the signing key.
const kindSessionLog = "gamesessionlog"

// Limits of game session logs.
const (
	// GameSessionLogRetention is how long a game session's log is kept after its upload: 14
	// days, as GetGameSessionLogUrl documents.
	GameSessionLogRetention = 14 * 24 * time.Hour
	// GameSessionLogURLLifetime is how long a pre-signed log URL stays valid: 15 minutes, as
	// GetGameSessionLogUrl documents for PreSignedUrl.
	GameSessionLogURLLifetime = 15 * time.Minute
	// MaxGameSessionLogBytes caps one game session's log. GameLift documents a per-session
	// limit ("see the service quotas"; logs over it are not saved) without stating it in the
	// API reference; Hoist takes 1 GiB, for the uncompressed files and for the zip alike.
	MaxGameSessionLogBytes = 1 << 30
)

// gameSessionLogDoc is a stored log as recorded. Uploaded is in Unix milliseconds.
type gameSessionLogDoc struct {
	Key      string `json:"key"`
	ARN      string `json:"arn"`
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Uploaded int64  `json:"uploaded"`
}

// GameSessionLog is a game session's log as the server stores it.
type GameSessionLog struct {
	// GameSessionID is the session's ARN.
	GameSessionID string
	// Name is the zip's path relative to the server's log directory, "<fleet>/<hash>.zip":
	// safe to use as a file path and as a URL path.
	Name string
	// Size is the zip's size in bytes (0 before the upload is saved).
	Size int64
	// Uploaded is when the upload was recorded (zero before).
	Uploaded time.Time
}

// GameSessionLogUpload says who uploads a log and for which game session.
type GameSessionLogUpload struct {
	FleetID, ComputeName string
	// GameSessionID is the session's ARN.
	GameSessionID string
}

// LogURLSigner makes the pre-signed download URL of a stored log.
type LogURLSigner func(GameSessionLog) (string, error)

func (d *gameSessionLogDoc) log() GameSessionLog {
	return GameSessionLog{GameSessionID: d.ARN, Name: d.Name, Size: d.Size, Uploaded: time.UnixMilli(d.Uploaded)}
}

// logName is the file name of a session's log: a hash of its key, so that whatever the
// session's ID string holds, the name is plain hex.
func logName(d *gameSessionDoc) string {
	sum := sha256.Sum256([]byte(d.Key))
	return d.FleetID + "/" + hex.EncodeToString(sum[:16]) + ".zip"
}

func noLogs(arn string) error {
	return api.Errorf(api.NotFoundException, "No logs are stored for game session %s.", arn)
}

// AcceptGameSessionLog records a log uploaded by the compute that hosted the game session.
// save stores the file under the GameSessionLog's Name and returns its size; it runs only
// once the upload is known to come from the session's compute, and the log is recorded only
// after it succeeded. A session of another fleet or compute is UnauthorizedException, a size
// over MaxGameSessionLogBytes InvalidRequestException.
func (s *Service) AcceptGameSessionLog(ctx context.Context, up GameSessionLogUpload, save func(GameSessionLog) (int64, error)) (GameSessionLog, error) {
	d, err := s.readSession(ctx, up.GameSessionID)
	if err != nil {
		return GameSessionLog{}, err
	}
	if d.FleetID != up.FleetID || d.Compute != up.ComputeName {
		return GameSessionLog{}, api.Errorf(api.UnauthorizedException,
			"Compute %s of fleet %s did not host game session %s.", up.ComputeName, up.FleetID, d.ARN)
	}
	size, err := save(GameSessionLog{GameSessionID: d.ARN, Name: logName(d)})
	if err != nil {
		return GameSessionLog{}, err
	}
	if size > MaxGameSessionLogBytes {
		return GameSessionLog{}, api.Errorf(api.InvalidRequestException,
			"The log of game session %s is %d bytes; at most %d are kept.", d.ARN, size, int64(MaxGameSessionLogBytes))
	}
	doc := &gameSessionLogDoc{Key: d.Key, ARN: d.ARN, Name: logName(d), Size: size, Uploaded: s.nowMillis()}
	err = s.update(ctx, func(tx store.Tx) error { return putLog(tx, doc) })
	return doc.log(), err
}

// putLog writes a log record, replacing an earlier upload for the same session.
func putLog(tx store.Tx, doc *gameSessionLogDoc) error {
	var old gameSessionLogDoc
	rec, err := getDoc(tx, kindSessionLog, doc.Key, &old, func() error { return errNoRecord })
	if errors.Is(err, errNoRecord) {
		return insertDoc(tx, kindSessionLog, doc.Key, doc)
	}
	if err != nil {
		return err
	}
	return putDoc(tx, rec, doc)
}

// GameSessionLogOf returns the stored log of a game session: NotFoundException for an unknown
// session and for one without a log (none uploaded, or older than GameSessionLogRetention).
func (s *Service) GameSessionLogOf(ctx context.Context, arn string) (GameSessionLog, error) {
	d, err := s.readSession(ctx, arn)
	if err != nil {
		return GameSessionLog{}, err
	}
	var doc gameSessionLogDoc
	if err := s.read(ctx, kindSessionLog, d.Key, &doc, func() error { return noLogs(d.ARN) }); err != nil {
		return GameSessionLog{}, err
	}
	if s.logExpired(&doc) {
		return GameSessionLog{}, noLogs(d.ARN)
	}
	return doc.log(), nil
}

func (s *Service) logExpired(doc *gameSessionLogDoc) bool {
	return !s.clock.Now().Before(time.UnixMilli(doc.Uploaded).Add(GameSessionLogRetention))
}

// GetGameSessionLogUrl answers where a game session's logs are stored. Without a LogURLSigner
// (the server installs one with GameSessionLogURLHandler) no URL can be made, so every session
// answers NotFoundException.
func (s *Service) GetGameSessionLogUrl(ctx context.Context, in *api.GetGameSessionLogUrlInput) (*api.GetGameSessionLogUrlOutput, error) {
	return s.GameSessionLogURLHandler(nil)(ctx, in)
}

// GameSessionLogURLHandler returns GetGameSessionLogUrl answering the URL sign makes for the
// session's stored log; a session without one answers NotFoundException.
func (s *Service) GameSessionLogURLHandler(sign LogURLSigner) func(context.Context, *api.GetGameSessionLogUrlInput) (*api.GetGameSessionLogUrlOutput, error) {
	return func(ctx context.Context, in *api.GetGameSessionLogUrlInput) (*api.GetGameSessionLogUrlOutput, error) {
		l, err := s.GameSessionLogOf(ctx, api.Deref(in.GameSessionId))
		if err != nil {
			return nil, err
		}
		if sign == nil {
			return nil, noLogs(l.GameSessionID)
		}
		url, err := sign(l)
		if err != nil {
			return nil, err
		}
		return &api.GetGameSessionLogUrlOutput{PreSignedUrl: api.String(url)}, nil
	}
}

// PurgeGameSessionLogs removes the logs older than GameSessionLogRetention: remove deletes
// the file, then the record goes (unless a new upload replaced it meanwhile). It returns how
// many were purged.
func (s *Service) PurgeGameSessionLogs(ctx context.Context, remove func(GameSessionLog) error) (int, error) {
	var expired []*store.Record
	err := s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindSessionLog, store.ListOptions{})
		for _, r := range recs {
			var doc gameSessionLogDoc
			if json.Unmarshal(r.Data, &doc) == nil && s.logExpired(&doc) {
				expired = append(expired, r)
			}
		}
		return err
	})
	n := 0
	for _, r := range expired {
		if err != nil {
			break
		}
		err = s.purgeLog(ctx, r, remove)
		n++
	}
	return n, err
}

func (s *Service) purgeLog(ctx context.Context, r *store.Record, remove func(GameSessionLog) error) error {
	var doc gameSessionLogDoc
	if err := json.Unmarshal(r.Data, &doc); err != nil {
		return err
	}
	if err := remove(doc.log()); err != nil {
		return err
	}
	return s.update(ctx, func(tx store.Tx) error {
		cur, err := tx.Get(kindSessionLog, r.ID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && cur.Version != r.Version) {
			return nil
		}
		if err != nil {
			return err
		}
		return tx.Delete(kindSessionLog, r.ID)
	})
}
