package sqlite

// OpenSnapshotting opens the store like Open but starts a snapshot after every commit that
// finds none running, so that tests exercise snapshots, log trimming and replay together.
func OpenSnapshotting(dir string) (*Store, error) {
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	s.snap.minLog = 1
	return s, nil
}
