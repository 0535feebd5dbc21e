package gamelift

import (
	"slices"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

// A fleet created without MetricGroups is in the group "default", and says so.
func TestMetricGroupsDefault(t *testing.T) {
	f, _ := newHostFixture(t)
	id := f.anywhereFleet(t, "plain")
	if a := f.attributes(t, id); !slices.Equal(a.MetricGroups, []string{DefaultMetricGroup}) {
		t.Errorf("MetricGroups = %v, want [default]", a.MetricGroups)
	}
	ok(f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String(id), MetricGroups: []string{"g"}}))(t)
	if a := f.attributes(t, id); !slices.Equal(a.MetricGroups, []string{"g"}) {
		t.Errorf("MetricGroups after update = %v, want [g]", a.MetricGroups)
	}
	stats := ok(f.svc.FleetStats(f.ctx))(t)
	if len(stats) == 0 {
		t.Fatal("FleetStats is empty")
	}
	for _, st := range stats {
		if st.MetricGroup != "g" || st.FleetID != id {
			t.Errorf("FleetStats = %+v, want fleet %s in group g", st, id)
		}
	}
}
