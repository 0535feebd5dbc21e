package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hoist-gg/hoist/gamelift"
)

// Source is the domain as the collector reads it at scrape time; *gamelift.Service is one.
type Source interface {
	FleetStats(context.Context) ([]gamelift.FleetStats, error)
	FleetTallies(context.Context) ([]gamelift.FleetTally, error)
	QueueStats(context.Context) ([]gamelift.QueueStats, error)
	MatchmakingStats(context.Context) ([]gamelift.MatchmakingStats, error)
	GameServerGroupStats(context.Context) ([]gamelift.GameServerGroupStats, error)
}

// scrapeTimeout bounds the store reads of one scrape.
const scrapeTimeout = 10 * time.Second

// Label sets.
var (
	fleetLabels = []string{"fleet_id", "location", "metric_group"}
	tallyLabels = []string{"fleet_id", "metric_group"}
	queueLabel  = []string{"queue"}
	configLabel = []string{"configuration"}
	groupLabel  = []string{"game_server_group"}
)

func desc(name, help string, labels []string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string{}, labels...), extra...), nil)
}

// Fleet metrics, per fleet and location (CloudWatch names in their help).
var (
	fleetActiveSessions     = desc("hoist_fleet_active_game_sessions", "Game sessions ACTIVE (ActiveGameSessions).", fleetLabels)
	fleetActivatingSessions = desc("hoist_fleet_activating_game_sessions", "Game sessions ACTIVATING (ActivatingGameSessions).", fleetLabels)
	fleetAvailableSessions  = desc("hoist_fleet_available_game_sessions", "ACTIVE server processes hosting no game session (AvailableGameSessions).", fleetLabels)
	fleetAvailableRatio     = desc("hoist_fleet_available_game_sessions_ratio", "Available game session slots over ACTIVE server processes (PercentAvailableGameSessions / 100).", fleetLabels)
	fleetCurrentPlayers     = desc("hoist_fleet_current_player_sessions", "Player sessions RESERVED or ACTIVE in ACTIVE game sessions (CurrentPlayerSessions).", fleetLabels)
	fleetAvailablePlayers   = desc("hoist_fleet_available_player_sessions", "Free player slots in ACTIVE game sessions that accept players (AvailablePlayerSessions).", fleetLabels)
	fleetMaxPlayers         = desc("hoist_fleet_maximum_player_sessions", "Maximum player sessions of ACTIVE game sessions (DescribeFleetUtilization MaximumPlayerSessionCount).", fleetLabels)
	fleetProcesses          = desc("hoist_fleet_server_processes", "Live server processes by status (ActiveServerProcesses for ACTIVE).", fleetLabels, "status")
	fleetHealthy            = desc("hoist_fleet_healthy_server_processes", "ACTIVE server processes whose health checks pass (HealthyServerProcesses).", fleetLabels)
	fleetHealthyRatio       = desc("hoist_fleet_healthy_server_processes_ratio", "Healthy over ACTIVE server processes (PercentHealthyServerProcesses / 100).", fleetLabels)
	fleetInstances          = desc("hoist_fleet_instances", "Instances of a managed fleet by status: PENDING, ACTIVE, IDLE, TERMINATING (ActiveInstances, IdleInstances).", fleetLabels, "status")
	fleetIdleRatio          = desc("hoist_fleet_idle_instances_ratio", "Idle over ACTIVE instances (PercentIdleInstances / 100).", fleetLabels)
	fleetCapacity           = desc("hoist_fleet_capacity_instances", "Capacity settings of a managed fleet location: desired, minimum, maximum (DesiredInstances, MinInstances, MaxInstances).", fleetLabels, "setting")
)

// Fleet counters, per fleet, durable (counted in the store with the change).
var (
	fleetActivations  = desc("hoist_fleet_server_process_activations_total", "Server processes that became ACTIVE (ServerProcessActivations).", tallyLabels)
	fleetTerminations = desc("hoist_fleet_server_process_terminations_total", "Server processes that ended (ServerProcessTerminations).", tallyLabels)
	fleetAbnormal     = desc("hoist_fleet_server_process_abnormal_terminations_total", "Server process events of abnormal ends: crashes, failed health checks, timeouts (ServerProcessAbnormalTerminations).", tallyLabels)
	fleetEvents       = desc("hoist_fleet_events_total", "Fleet events by event code (DescribeFleetEvents).", tallyLabels, "code")
)

// collector reads the domain at scrape time.
type collector struct {
	src Source
	log *slog.Logger
}

func newDomainCollector(src Source, log *slog.Logger) *collector {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &collector{src: src, log: log}
}

// Describe sends nothing: the collector is unchecked, as its series come and go with fleets,
// queues and configurations.
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the domain and sends its metrics. A part that cannot be read is logged and
// left out; the rest is sent.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, part := range []func(context.Context, chan<- prometheus.Metric) error{
		c.collectFleets, c.collectFleetTallies, c.collectQueues, c.collectMatchmaking, c.collectGameServers,
	} {
		if err := part(ctx, ch); err != nil {
			c.log.Warn("metrics: reading the domain failed", "error", err)
		}
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// ratio is n/d, 0 when d is 0.
func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func (c *collector) collectFleets(ctx context.Context, ch chan<- prometheus.Metric) error {
	stats, err := c.src.FleetStats(ctx)
	if err != nil {
		return err
	}
	for _, f := range stats {
		l := []string{f.FleetID, f.Location, f.MetricGroup}
		active := f.Processes["ACTIVE"]
		gauge(ch, fleetActiveSessions, float64(f.ActiveGameSessions), l...)
		gauge(ch, fleetActivatingSessions, float64(f.ActivatingGameSessions), l...)
		gauge(ch, fleetAvailableSessions, float64(f.AvailableGameSessions), l...)
		gauge(ch, fleetAvailableRatio, ratio(f.AvailableGameSessions, active), l...)
		gauge(ch, fleetCurrentPlayers, float64(f.CurrentPlayerSessions), l...)
		gauge(ch, fleetAvailablePlayers, float64(f.AvailablePlayerSessions), l...)
		gauge(ch, fleetMaxPlayers, float64(f.MaximumPlayerSessions), l...)
		for _, st := range []string{"INITIALIZING", "ACTIVE", "TERMINATING"} {
			gauge(ch, fleetProcesses, float64(f.Processes[st]), append(l, st)...)
		}
		gauge(ch, fleetHealthy, float64(f.HealthyProcesses), l...)
		gauge(ch, fleetHealthyRatio, ratio(f.HealthyProcesses, active), l...)
		if f.Instances != nil {
			collectInstances(ch, f.Instances, l)
		}
	}
	return nil
}

func collectInstances(ch chan<- prometheus.Metric, in *gamelift.InstanceStats, l []string) {
	for st, n := range map[string]int{"PENDING": in.Pending, "ACTIVE": in.Active, "IDLE": in.Idle, "TERMINATING": in.Terminating} {
		gauge(ch, fleetInstances, float64(n), append(l, st)...)
	}
	gauge(ch, fleetIdleRatio, ratio(in.Idle, in.Active), l...)
	for st, n := range map[string]int{"desired": in.Desired, "minimum": in.Minimum, "maximum": in.Maximum} {
		gauge(ch, fleetCapacity, float64(n), append(l, st)...)
	}
}

func (c *collector) collectFleetTallies(ctx context.Context, ch chan<- prometheus.Metric) error {
	tallies, err := c.src.FleetTallies(ctx)
	if err != nil {
		return err
	}
	for _, t := range tallies {
		l := []string{t.FleetID, t.MetricGroup}
		counter(ch, fleetActivations, float64(t.Activations), l...)
		counter(ch, fleetTerminations, float64(t.Terminations), l...)
		var abnormal int64
		for _, code := range gamelift.AbnormalTerminationCodes {
			abnormal += t.Events[string(code)]
		}
		counter(ch, fleetAbnormal, float64(abnormal), l...)
		for code, n := range t.Events {
			counter(ch, fleetEvents, float64(n), append(l, code)...)
		}
	}
	return nil
}
