package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// sizeReport is every scenario measured at one size.
type sizeReport struct {
	Records int64
	Seeded  seeded
	Results []result
}

// result is the runs of one scenario.
type result struct {
	Name string
	Runs []measurement
}

func (r *result) wall() []float64 {
	return values(r.Runs, func(m measurement) float64 { return m.Wall.Seconds() })
}
func (r *result) cpu() []float64 {
	return values(r.Runs, func(m measurement) float64 { return m.CPU.Seconds() })
}
func (r *result) rss() []float64 { return values(r.Runs, func(m measurement) float64 { return m.RSS }) }

func values(ms []measurement, f func(measurement) float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = f(m)
	}
	slices.Sort(out)
	return out
}

// median of sorted values.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (s *sizeReport) find(name string) *result {
	for i := range s.Results {
		if s.Results[i].Name == name {
			return &s.Results[i]
		}
	}
	return nil
}

// writeReport writes the Markdown report: a table per size, then the
// targets.
func writeReport(w io.Writer, cfg config, base measurement, reps []sizeReport, fl fleetReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "causalbench: %d runs of each scenario (after %d warm-up), %d channels, %s %s/%s, %d CPUs, %s; a child doing nothing peaks at %.1f MiB RSS\n\n",
		cfg.Runs, cfg.Warmup, cfg.Channels, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"), base.RSS)
	for _, rep := range reps {
		fmt.Fprintf(&b, "### %d records (%.2f clock entries a record, %d aborted records, %.0f MiB of keys, values and headers)\n\n",
			rep.Records, rep.Seeded.MeanClock, rep.Seeded.Aborted, float64(rep.Seeded.Bytes)/(1<<20))
		b.WriteString("| scenario | wall median (min–max) | CPU median (min–max) | peak RSS median (max) | records/s | wall ÷ floor | CPU ÷ floor |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
		floor := rep.find("floor")
		for i := range rep.Results {
			r := &rep.Results[i]
			wall, cpu, rss := r.wall(), r.cpu(), r.rss()
			ratio := func(v []float64, f func(*result) []float64) string {
				if floor == nil || r == floor {
					return "—"
				}
				return fmt.Sprintf("%.2f×", median(v)/median(f(floor)))
			}
			fmt.Fprintf(&b, "| %s | %.3f s (%.3f–%.3f) | %.3f s (%.3f–%.3f) | %.0f MiB (%.0f) | %.2f M | %s | %s |\n",
				r.Name, median(wall), wall[0], wall[len(wall)-1], median(cpu), cpu[0], cpu[len(cpu)-1],
				median(rss), rss[len(rss)-1], float64(rep.Records)/median(wall)/1e6,
				ratio(wall, (*result).wall), ratio(cpu, (*result).cpu))
		}
		b.WriteString("\n")
	}
	writeFleet(&b, fl)
	if cfg.Best {
		b.WriteString("Targets take each figure as the best (minimum) of the runs.\n\n")
	} else {
		b.WriteString("Targets take each figure as the median of the runs.\n\n")
	}
	b.WriteString("| target | measured | met |\n|---|---|---|\n")
	for _, t := range append(targets(reps, cfg.Best), fleetTargets(fl, cfg.Best)...) {
		met := "no"
		if t.met {
			met = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, t.measured, met)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// target is one target of docs/performance.md and how the runs did.
type target struct {
	what, measured string
	met            bool
}

// targets evaluates the targets on the first size (and flatness between
// the first and last sizes); a target whose scenarios did not run is left
// out.
func targets(reps []sizeReport, best bool) []target {
	if len(reps) == 0 {
		return nil
	}
	first := &reps[0]
	med := func(rep *sizeReport, name string, f func(*result) []float64) (float64, bool) {
		r := rep.find(name)
		if r == nil || len(r.Runs) == 0 {
			return 0, false
		}
		if best {
			return f(r)[0], true
		}
		return median(f(r)), true
	}
	var out []target
	if replay, ok := med(first, "replay", (*result).wall); ok {
		if floor, ok := med(first, "floor", (*result).wall); ok {
			out = append(out, target{"broker replay wall ≤ 1.25 × floor", fmt.Sprintf("%.2f×", replay/floor), replay <= 1.25*floor})
		}
		if kcat, ok := med(first, "kcat", (*result).wall); ok {
			out = append(out, target{"broker replay wall < kcat", fmt.Sprintf("%.3f s vs %.3f s", replay, kcat), replay < kcat})
		}
	}
	if replay, ok := med(first, "replay", (*result).cpu); ok {
		if floor, ok := med(first, "floor", (*result).cpu); ok {
			// Issue 27's target is on CPU: wall on two shared cores is
			// noise, CPU is what replay costs beside the floor.
			out = append(out, target{"broker replay CPU ≤ 1.25 × floor", fmt.Sprintf("%.2f×", replay/floor), replay <= 1.25*floor})
		}
	}
	for _, name := range []string{"replay", "replay-capture", "replay-offline"} {
		rss, ok := med(first, name, (*result).rss)
		if !ok {
			continue
		}
		out = append(out, target{name + " peak RSS ≤ 150 MiB", fmt.Sprintf("%.0f MiB", rss), rss <= 150})
		if len(reps) > 1 {
			last := &reps[len(reps)-1]
			big, _ := med(last, name, (*result).rss)
			out = append(out, target{fmt.Sprintf("%s peak RSS at %d within 10 %% of %d", name, last.Records, first.Records),
				fmt.Sprintf("%.0f vs %.0f MiB (%+.0f %%)", big, rss, 100*(big/rss-1)), big <= 1.10*rss})
		}
	}
	if wall, ok := med(first, "replay-capture", (*result).wall); ok {
		rate := float64(first.Records) / wall
		out = append(out, target{"capture replay ≥ 2 M records/s", fmt.Sprintf("%.2f M/s", rate/1e6), rate >= 2e6})
	}
	if wall, ok := med(first, "replay-offline", (*result).wall); ok {
		rate := float64(first.Records) / wall
		out = append(out, target{"offline capture replay ≥ 2 M records/s", fmt.Sprintf("%.2f M/s", rate/1e6), rate >= 2e6})
	}
	for _, c := range []struct {
		name, what string
		rate       float64
	}{{"check", "check, one scope", 1e6}, {"check-8", "check, eight scopes", 0.8e6}} {
		if wall, ok := med(first, c.name, (*result).wall); ok {
			rate := float64(first.Records) / wall
			out = append(out, target{fmt.Sprintf("%s ≥ %.1f M records/s", c.what, c.rate/1e6), fmt.Sprintf("%.2f M/s", rate/1e6), rate >= c.rate})
		}
		for i := range reps {
			if reps[i].Records < 10_000_000 {
				continue
			}
			if rss, ok := med(&reps[i], c.name, (*result).rss); ok {
				out = append(out, target{fmt.Sprintf("%s peak RSS at %d records ≤ 1 GiB", c.what, reps[i].Records), fmt.Sprintf("%.0f MiB", rss), rss <= 1024})
			}
		}
	}
	// Issue 36's, relative to the broker replay of the same range.
	if replay, ok := med(first, "replay", (*result).wall); ok {
		if file, ok := med(first, "replay-capture", (*result).wall); ok {
			out = append(out, target{"replay -f wall ≤ 0.6 × broker replay", fmt.Sprintf("%.2f× (%.3f s vs %.3f s)", file/replay, file, replay), file <= 0.6*replay})
		}
		if check, ok := med(first, "check", (*result).wall); ok {
			out = append(out, target{"check, one scope, wall ≤ 1.5 × broker replay", fmt.Sprintf("%.2f×", check/replay), check <= 1.5*replay})
		}
	}
	if capture, ok := med(first, "capture", (*result).wall); ok {
		if kcat, ok := med(first, "kcat-json", (*result).wall); ok {
			out = append(out, target{"capture writing ≥ 3 × faster than kcat -J", fmt.Sprintf("%.2f×", kcat/capture), kcat >= 3*capture})
		}
	}
	return out
}

// writeFleet writes the tables of the fleet scenarios.
func writeFleet(b *strings.Builder, fl fleetReport) {
	if st := fl.State; st != nil {
		fmt.Fprintf(b, "### Ordering state: %d changelog entries over %d tasks (%d tombstones, %d held records live)\n\n", st.Entries, fleetTasks, st.Deleted, st.Held)
		b.WriteString("| scenario | wall median (min–max) | CPU median (min–max) | peak RSS median (max) | entries/s | entries per CPU-second | wall ÷ floor | CPU ÷ floor |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range []*result{&st.Floor, &st.Result} {
			wall, cpu, rss := r.wall(), r.cpu(), r.rss()
			ratios := "— | —"
			if r != &st.Floor && len(st.Floor.Runs) > 0 {
				ratios = fmt.Sprintf("%.2f× | %.2f×", median(wall)/median(st.Floor.wall()), median(cpu)/median(st.Floor.cpu()))
			}
			fmt.Fprintf(b, "| %s | %.3f s (%.3f–%.3f) | %.3f s (%.3f–%.3f) | %.0f MiB (%.0f) | %.2f M | %.2f M | %s |\n",
				r.Name, median(wall), wall[0], wall[len(wall)-1], median(cpu), cpu[0], cpu[len(cpu)-1], median(rss), rss[len(rss)-1],
				float64(st.Entries)/median(wall)/1e6, float64(st.Entries)/median(cpu)/1e6, ratios)
		}
		b.WriteString("\n")
	}
	if len(fl.Fleet) == 0 {
		return
	}
	fmt.Fprintf(b, "### Parsley processes of %d tasks: processes, and the exporter following them\n\n", fleetTasks)
	b.WriteString("| processes | `processes` wall median (min–max) | CPU median (min–max) | peak RSS median (max) | scrape median (min–max) | scrape size | exporter: first refresh | idle refresh | CPU per idle refresh | tasks diagnosed, first / idle | exporter peak RSS |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, fs := range fl.Fleet {
		fmt.Fprintf(b, "| %d |", fs.Procs)
		if r := fs.Processes; r != nil {
			wall, cpu, rss := r.wall(), r.cpu(), r.rss()
			fmt.Fprintf(b, " %.3f s (%.3f–%.3f) | %.3f s (%.3f–%.3f) | %.0f MiB (%.0f) |", median(wall), wall[0], wall[len(wall)-1],
				median(cpu), cpu[0], cpu[len(cpu)-1], median(rss), rss[len(rss)-1])
		} else {
			b.WriteString(" — | — | — |")
		}
		if sr := fs.Scrape; sr != nil {
			sc := scrapeMillis(sr)
			fmt.Fprintf(b, " %.1f ms (%.1f–%.1f) | %.0f KiB | %.3f s | %.3f s | %.0f ms | %.0f / %.0f | %.0f MiB |\n", median(sc), sc[0], sc[len(sc)-1],
				float64(sr.Bytes)/1024, sr.FirstRefresh.Seconds(), sr.IdleRefresh.Seconds(), float64(sr.IdleCPU)/1e6, sr.Diagnosed, sr.Rediagnosed, sr.RSS)
		} else {
			b.WriteString(" — | — | — | — | — | — | — |\n")
		}
	}
	b.WriteString("\n")
}

// scrapeMillis is the scrapes' times in milliseconds, sorted.
func scrapeMillis(sr *scrapeResult) []float64 {
	out := make([]float64, len(sr.Scrapes))
	for i, d := range sr.Scrapes {
		out[i] = float64(d) / 1e6
	}
	slices.Sort(out)
	return out
}

// storeTarget is issue 36's memory target of a reader of Parsley stores:
// its peak RSS (MiB) at most twice the bytes of the live stores it holds.
func storeTarget(what string, rss float64, liveBytes int64) target {
	live := float64(liveBytes) / (1 << 20)
	return target{what + " peak RSS ≤ 2 × the live store's bytes", fmt.Sprintf("%.0f MiB for %.2f MiB (%.1f×)", rss, live, rss/live), rss <= 2*live}
}

// fleetTargets evaluates the targets of the fleet scenarios, at 200
// processes (or the first count measured), on the medians or, with best,
// on the best runs, as targets does.
func fleetTargets(fl fleetReport, best bool) []target {
	pick := median
	if best {
		pick = func(v []float64) float64 { return v[0] } // sorted
	}
	var out []target
	if st := fl.State; st != nil && len(st.Result.Runs) > 0 {
		rate := float64(st.Entries) / pick(st.Result.wall())
		out = append(out, target{fmt.Sprintf("state over %d entries ≥ 1 M entries/s", st.Entries), fmt.Sprintf("%.2f M/s", rate/1e6), rate >= 1e6})
		if st.LiveBytes > 0 {
			out = append(out, storeTarget("state", pick(st.Result.rss()), st.LiveBytes))
		}
	}
	if len(fl.Fleet) == 0 {
		return out
	}
	at := fl.Fleet[0]
	for _, fs := range fl.Fleet {
		if fs.Procs == 200 {
			at = fs
		}
	}
	if r := at.Processes; r != nil && len(r.Runs) > 0 {
		wall := pick(r.wall())
		out = append(out, target{fmt.Sprintf("processes, %d × %d tasks ≤ 3 s", at.Procs, fleetTasks), fmt.Sprintf("%.3f s", wall), wall <= 3})
		if at.LiveBytes > 0 {
			out = append(out, storeTarget("processes", pick(r.rss()), at.LiveBytes))
		}
	}
	if sr := at.Scrape; sr != nil && len(sr.Scrapes) > 0 {
		ms := pick(scrapeMillis(sr))
		out = append(out, target{fmt.Sprintf("exporter scrape, %d × %d tasks ≤ 100 ms", at.Procs, fleetTasks), fmt.Sprintf("%.1f ms", ms), ms <= 100})
		out = append(out, target{"exporter idle refresh diagnoses no task again", fmt.Sprintf("%.0f diagnoses", sr.Rediagnosed), sr.Rediagnosed == 0})
		if at.LiveBytes > 0 && sr.RSS > 0 {
			out = append(out, storeTarget("exporter", sr.RSS, at.LiveBytes))
		}
	}
	return out
}
