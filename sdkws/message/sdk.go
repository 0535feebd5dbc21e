package message

// Actions of the Server SDK protocol: requests the SDK sends (§3) and pushes the service sends
// (§4).
const (
	ActionActivateServerProcess             = "ActivateServerProcess"
	ActionHeartbeatServerProcess            = "HeartbeatServerProcess"
	ActionActivateGameSession               = "ActivateGameSession"
	ActionAcceptPlayerSession               = "AcceptPlayerSession"
	ActionRemovePlayerSession               = "RemovePlayerSession"
	ActionUpdatePlayerSessionCreationPolicy = "UpdatePlayerSessionCreationPolicy"
	ActionDescribePlayerSessions            = "DescribePlayerSessions"
	ActionStartMatchBackfill                = "StartMatchBackfill"
	ActionStopMatchBackfill                 = "StopMatchBackfill"
	ActionGetComputeCertificate             = "GetComputeCertificate"
	ActionGetFleetRoleCredentials           = "GetFleetRoleCredentials"
	ActionTerminateServerProcess            = "TerminateServerProcess"

	ActionCreateGameSession = "CreateGameSession"
	ActionUpdateGameSession = "UpdateGameSession"
	ActionTerminateProcess  = "TerminateProcess"
	ActionRefreshConnection = "RefreshConnection"
)

// ActivateServerProcess is sent by ProcessReady (§3). Its reply is a bare ack.
type ActivateServerProcess struct {
	SdkVersion     string   `json:"SdkVersion,omitempty"`
	SdkLanguage    string   `json:"SdkLanguage,omitempty"`
	SdkToolName    string   `json:"SdkToolName,omitempty"`
	SdkToolVersion string   `json:"SdkToolVersion,omitempty"`
	Port           int      `json:"Port"`
	LogPaths       []string `json:"LogPaths"`
}

// HeartbeatServerProcess is sent by the health loop (§3, §6.3). Its reply is a bare ack.
type HeartbeatServerProcess struct {
	HealthStatus bool `json:"HealthStatus"`
}

// ActivateGameSession is sent by ActivateGameSession() (§3). Its reply is a bare ack.
type ActivateGameSession struct {
	GameSessionID string `json:"GameSessionId"`
}

// AcceptPlayerSession is sent by AcceptPlayerSession() (§3). Its reply is a bare ack.
type AcceptPlayerSession struct {
	GameSessionID   string `json:"GameSessionId"`
	PlayerSessionID string `json:"PlayerSessionId"`
}

// RemovePlayerSession is sent by RemovePlayerSession() (§3). Its reply is a bare ack.
type RemovePlayerSession struct {
	GameSessionID   string `json:"GameSessionId"`
	PlayerSessionID string `json:"PlayerSessionId"`
}

// UpdatePlayerSessionCreationPolicy is sent by the same-named call (§3); PlayerSessionPolicy
// is ACCEPT_ALL or DENY_ALL. Its reply is a bare ack.
type UpdatePlayerSessionCreationPolicy struct {
	GameSessionID       string `json:"GameSessionId"`
	PlayerSessionPolicy string `json:"PlayerSessionPolicy"`
}

// DescribePlayerSessions is sent by the same-named call (§3); every field is optional.
type DescribePlayerSessions struct {
	GameSessionID             string `json:"GameSessionId,omitempty"`
	PlayerID                  string `json:"PlayerId,omitempty"`
	PlayerSessionID           string `json:"PlayerSessionId,omitempty"`
	PlayerSessionStatusFilter string `json:"PlayerSessionStatusFilter,omitempty"`
	NextToken                 string `json:"NextToken,omitempty"`
	Limit                     int    `json:"Limit,omitempty"`
}

// DescribePlayerSessionsResult is the reply payload of DescribePlayerSessions (§3).
type DescribePlayerSessionsResult struct {
	PlayerSessions []PlayerSession `json:"PlayerSessions"`
	NextToken      string          `json:"NextToken,omitempty"`
}

// StartMatchBackfill is sent by the same-named call (§3).
type StartMatchBackfill struct {
	TicketID                    string   `json:"TicketId"`
	GameSessionArn              string   `json:"GameSessionArn"`
	MatchmakingConfigurationArn string   `json:"MatchmakingConfigurationArn"`
	Players                     []Player `json:"Players"`
}

// StartMatchBackfillResult is the reply payload of StartMatchBackfill (§3).
type StartMatchBackfillResult struct {
	TicketID string `json:"TicketId"`
}

// StopMatchBackfill is sent by the same-named call (§3). Its reply is a bare ack.
type StopMatchBackfill struct {
	GameSessionArn              string `json:"GameSessionArn"`
	MatchmakingConfigurationArn string `json:"MatchmakingConfigurationArn"`
	TicketID                    string `json:"TicketId"`
}

// GetComputeCertificate is sent by the same-named call (§3); it has no fields.
type GetComputeCertificate struct{}

// GetComputeCertificateResult is the reply payload of GetComputeCertificate (§3): a path on
// the compute, not the certificate itself.
type GetComputeCertificateResult struct {
	CertificatePath string `json:"CertificatePath"`
	ComputeName     string `json:"ComputeName"`
}

// GetFleetRoleCredentials is sent by the same-named SDK call and by the agent (§3, §7.3).
type GetFleetRoleCredentials struct {
	RoleArn         string `json:"RoleArn,omitempty"`
	RoleSessionName string `json:"RoleSessionName,omitempty"`
}

// FleetRoleCredentials is the reply payload of GetFleetRoleCredentials (§3). Expiration is in
// epoch milliseconds. An empty AccessKeyID tells the SDK the compute has no fleet role (§9.9).
type FleetRoleCredentials struct {
	AssumedRoleUserArn string `json:"AssumedRoleUserArn"`
	AssumedRoleID      string `json:"AssumedRoleId"`
	AccessKeyID        string `json:"AccessKeyId"`
	SecretAccessKey    string `json:"SecretAccessKey"`
	SessionToken       string `json:"SessionToken"`
	Expiration         int64  `json:"Expiration"`
}

// TerminateServerProcess is sent by ProcessEnding (§3); it has no fields.
type TerminateServerProcess struct{}

// CreateGameSession is the push that starts a game session on a process (§4). Note the key
// GameSessionName here versus Name inside GameSession.
type CreateGameSession struct {
	GameSessionID             string            `json:"GameSessionId"`
	GameSessionName           string            `json:"GameSessionName,omitempty"`
	GameSessionData           string            `json:"GameSessionData,omitempty"`
	MatchmakerData            string            `json:"MatchmakerData,omitempty"`
	IPAddress                 string            `json:"IpAddress,omitempty"`
	DNSName                   string            `json:"DnsName,omitempty"`
	Port                      int               `json:"Port"`
	MaximumPlayerSessionCount int               `json:"MaximumPlayerSessionCount"`
	GameProperties            map[string]string `json:"GameProperties"`
}

// UpdateGameSession is the push that tells a process its game session changed (§4).
type UpdateGameSession struct {
	GameSession      GameSession `json:"GameSession"`
	UpdateReason     string      `json:"UpdateReason"`
	BackfillTicketID string      `json:"BackfillTicketId,omitempty"`
}

// TerminateProcess is the push that asks a process to shut down (§4). TerminationTime is in
// epoch milliseconds.
type TerminateProcess struct {
	TerminationTime int64 `json:"TerminationTime"`
}

// RefreshConnection is the push that moves a process to a new endpoint and token (§4).
type RefreshConnection struct {
	RefreshConnectionEndpoint string `json:"RefreshConnectionEndpoint"`
	AuthToken                 string `json:"AuthToken"`
}

// GameSession is the nested game session of UpdateGameSession (§5.1).
type GameSession struct {
	GameSessionID             string            `json:"GameSessionId"`
	Name                      string            `json:"Name,omitempty"`
	FleetID                   string            `json:"FleetId,omitempty"`
	GameSessionData           string            `json:"GameSessionData,omitempty"`
	MatchmakerData            string            `json:"MatchmakerData,omitempty"`
	DNSName                   string            `json:"DnsName,omitempty"`
	IPAddress                 string            `json:"IpAddress,omitempty"`
	MaximumPlayerSessionCount int               `json:"MaximumPlayerSessionCount"`
	Port                      int               `json:"Port"`
	GameProperties            map[string]string `json:"GameProperties"`
	Location                  string            `json:"Location,omitempty"`
	Status                    string            `json:"Status,omitempty"`
	StatusReason              string            `json:"StatusReason,omitempty"`
}

// PlayerSession is one entry of DescribePlayerSessionsResult (§5.2); times are epoch ms.
type PlayerSession struct {
	PlayerSessionID string `json:"PlayerSessionId"`
	PlayerID        string `json:"PlayerId,omitempty"`
	GameSessionID   string `json:"GameSessionId,omitempty"`
	FleetID         string `json:"FleetId,omitempty"`
	IPAddress       string `json:"IpAddress,omitempty"`
	DNSName         string `json:"DnsName,omitempty"`
	PlayerData      string `json:"PlayerData,omitempty"`
	Port            int    `json:"Port,omitempty"`
	CreationTime    int64  `json:"CreationTime,omitempty"`
	TerminationTime int64  `json:"TerminationTime,omitempty"`
	Status          string `json:"Status,omitempty"`
}

// Player is one player of StartMatchBackfill (§5.3).
type Player struct {
	PlayerID         string                    `json:"PlayerId"`
	Team             string                    `json:"Team,omitempty"`
	PlayerAttributes map[string]AttributeValue `json:"PlayerAttributes,omitempty"`
	LatencyInMs      map[string]int            `json:"LatencyInMs,omitempty"`
}

// AttributeValue is a typed player attribute (§5.3): AttrType names which of S, N, SL, SDM is
// set.
type AttributeValue struct {
	AttrType string             `json:"AttrType"`
	S        *string            `json:"S,omitempty"`
	N        *float64           `json:"N,omitempty"`
	SL       []string           `json:"SL,omitempty"`
	SDM      map[string]float64 `json:"SDM,omitempty"`
}

// Action implementations: each payload knows the Action it travels under.

func (ActivateServerProcess) Action() string  { return ActionActivateServerProcess }
func (HeartbeatServerProcess) Action() string { return ActionHeartbeatServerProcess }
func (ActivateGameSession) Action() string    { return ActionActivateGameSession }
func (AcceptPlayerSession) Action() string    { return ActionAcceptPlayerSession }
func (RemovePlayerSession) Action() string    { return ActionRemovePlayerSession }
func (UpdatePlayerSessionCreationPolicy) Action() string {
	return ActionUpdatePlayerSessionCreationPolicy
}
func (DescribePlayerSessions) Action() string  { return ActionDescribePlayerSessions }
func (StartMatchBackfill) Action() string      { return ActionStartMatchBackfill }
func (StopMatchBackfill) Action() string       { return ActionStopMatchBackfill }
func (GetComputeCertificate) Action() string   { return ActionGetComputeCertificate }
func (GetFleetRoleCredentials) Action() string { return ActionGetFleetRoleCredentials }
func (TerminateServerProcess) Action() string  { return ActionTerminateServerProcess }
func (CreateGameSession) Action() string       { return ActionCreateGameSession }
func (UpdateGameSession) Action() string       { return ActionUpdateGameSession }
func (TerminateProcess) Action() string        { return ActionTerminateProcess }
func (RefreshConnection) Action() string       { return ActionRefreshConnection }
