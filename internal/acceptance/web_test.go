package acceptance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/causalctl/causalctl/internal/demo"
	"github.com/causalctl/causalctl/internal/demo/demotest"
	"github.com/causalctl/causalctl/internal/inspect"
	"github.com/causalctl/causalctl/internal/kafka"
	"github.com/causalctl/causalctl/internal/process"
	"github.com/causalctl/causalctl/internal/web"
)

// TestWebAPIAgreesWithCommands: on one cluster state (the demo under
// --fault dangling, the clock stopped), the pages' API and the commands
// answer alike: /api/v1/processes is `processes -o json` (ordered stuck
// first, here one process), and /api/v1/processes/notifier is `holds --app
// notifier -o json`.
func TestWebAPIAgreesWithCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, _ := demotest.Dangling(ctx, t)
	now := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	cl, err := kafka.Dial(ctx, kafka.Config{Brokers: []string{d.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	srv := httptest.NewServer(web.Handler(&web.Cluster{Client: cl, TxnWait: kafka.DefaultTxnWait, Concurrency: 1,
		RetentionWarn: inspect.DefaultRetentionWarn, Select: process.Selection{}, MaxAge: time.Hour, Now: func() time.Time { return now }}, nil, web.Options{}))
	defer srv.Close()
	for _, c := range []struct {
		api  string
		args []string
	}{
		{"/api/v1/processes", []string{"processes", "-o", "json"}},
		{"/api/v1/processes/" + demo.NotifierApp, []string{"holds", "--app", demo.NotifierApp, "-o", "json"}},
	} {
		_, out, errOut := runAt(t, d.Addr(), now, c.args...)
		res, err := http.Get(srv.URL + c.api)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var fromCLI, fromAPI any
		if err := json.Unmarshal([]byte(out), &fromCLI); err != nil {
			t.Fatalf("%v: %v (%s)", c.args, err, errOut)
		}
		if err := json.Unmarshal(body, &fromAPI); err != nil {
			t.Fatalf("%s: %v", c.api, err)
		}
		if !reflect.DeepEqual(fromCLI, fromAPI) {
			t.Errorf("%s and %v disagree:\nAPI %s\nCLI %s", c.api, c.args, body, out)
		}
	}
}
