/*
Copyright 2026 The cluster-api-provider-kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// writeTable prints one line per row: each milestone's offset from the
// cluster's creation, in seconds; "-" where a milestone was not found.
func writeTable(w io.Writer, t Timeline) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	title := fmt.Sprintf("%s/%s: seconds from the Cluster's creation (%s)\n", t.Namespace, t.Cluster,
		t.Start.UTC().Format(time.RFC3339))
	lines := []string{fmt.Sprintf("row\trole\t%s\t", strings.Join(machineMilestones, "\t"))}
	var cluster []string
	for _, r := range t.Rows {
		if r.Role != "cluster" {
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t", r.Name, r.Role, strings.Join(offsets(r, machineMilestones), "\t")))
			continue
		}
		for _, e := range r.Events {
			cluster = append(cluster, fmt.Sprintf("%s: %s\n", e.Milestone, seconds(e.Offset)))
		}
	}
	if _, err := io.WriteString(tw, strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, title+b.String()+strings.Join(cluster, ""))
	return err
}

func offsets(r Row, order []string) []string {
	at := map[string]time.Duration{}
	for _, e := range r.Events {
		at[e.Milestone] = e.Offset
	}
	cells := make([]string, len(order))
	for i, m := range order {
		cells[i] = "-"
		if d, ok := at[m]; ok {
			cells[i] = seconds(d)
		}
	}
	return cells
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// The chart's geometry, in SVG user units.
const (
	labelWidth = 280
	chartWidth = 720
	rowHeight  = 26
	barHeight  = 16
	topMargin  = 40
)

// phaseColors give every phase its own colour; the legend lists them.
var phaseColors = map[string]string{
	"waiting for bootstrap data":   "#bdbdbd",
	"pod scheduling and start":     "#90caf9",
	"systemd boot":                 "#1e88e5",
	"bootstrap (kubeadm)":          "#fb8c00",
	"node ready":                   "#43a047",
	"control plane initialization": "#8e24aa",
	"until available":              "#ce93d8",
}

// legendOrder is the legend's order: a machine's phases, then the cluster's.
var legendOrder = []string{"waiting for bootstrap data", "pod scheduling and start", "systemd boot",
	"bootstrap (kubeadm)", "node ready", "control plane initialization", "until available"}

// writeSVG draws a Gantt chart: one bar per row, a coloured span per phase,
// a time axis in seconds from the cluster's creation, and a legend.
func writeSVG(w io.Writer, t Timeline) error {
	end := max(t.end(), time.Second)
	scale := float64(chartWidth) / end.Seconds()
	height := topMargin + rowHeight*len(t.Rows) + 30 + 20*len(legendOrder)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n",
		labelWidth+chartWidth+20, height)
	fmt.Fprintf(&b, `<text x="4" y="16" font-weight="bold">%s/%s: seconds from the Cluster's creation</text>`+"\n",
		html.EscapeString(t.Namespace), html.EscapeString(t.Cluster))
	writeAxis(&b, end, scale, topMargin+rowHeight*len(t.Rows))
	for i, r := range t.Rows {
		y := topMargin + rowHeight*i
		fmt.Fprintf(&b, `<text x="4" y="%d">%s (%s)</text>`+"\n", y+barHeight-3, html.EscapeString(r.Name), r.Role)
		for _, s := range r.Spans {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.85"><title>%s: %s s to %s s</title></rect>`+"\n",
				labelWidth+s.Start.Seconds()*scale, y, max((s.End-s.Start).Seconds()*scale, 1), barHeight,
				phaseColors[s.Phase], s.Phase, seconds(s.Start), seconds(s.End))
		}
	}
	legendTop := topMargin + rowHeight*len(t.Rows) + 30
	for i, phase := range legendOrder {
		y := legendTop + 20*i
		fmt.Fprintf(&b, `<rect x="4" y="%d" width="14" height="12" fill="%s"/><text x="24" y="%d">%s</text>`+"\n",
			y, phaseColors[phase], y+10, phase)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAxis draws a tick and a label every step seconds, below the rows.
func writeAxis(b *strings.Builder, end time.Duration, scale float64, bottom int) {
	step := axisStep(end)
	for at := time.Duration(0); at <= end; at += step {
		x := labelWidth + at.Seconds()*scale
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e0e0e0"/>`+"\n", x, topMargin-6, x, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#616161">%d</text>`+"\n",
			x, bottom+14, int(at.Seconds()))
	}
}

// axisStep is a round tick interval that gives at most about ten ticks.
func axisStep(end time.Duration) time.Duration {
	for _, step := range []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute} {
		if end/step <= 10 {
			return step
		}
	}
	return 10 * time.Minute
}
