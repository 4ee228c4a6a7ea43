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

package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// SumCounter adds the samples of the metric name in a Prometheus text
// exposition whose labels include every pair of match; it fails when there is
// no such sample.
func SumCounter(exposition, name string, match map[string]string) (float64, error) {
	sum, found := 0.0, false
	for lineNumber, line := range strings.Split(exposition, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sample, err := parseSample(line)
		if err != nil {
			return 0, fmt.Errorf("metrics line %d: %w", lineNumber+1, err)
		}
		if sample.name != name || !includes(sample.labels, match) {
			continue
		}
		sum, found = sum+sample.value, true
	}
	if !found {
		return 0, fmt.Errorf("no sample of %s with labels %v", name, match)
	}
	return sum, nil
}

// sample is one line of a Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseSample parses 'name{label="value",...} value [timestamp]'.
func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, fmt.Errorf("no metric name in %q", line)
	}
	s.name, line = line[:end], line[end:]
	if strings.HasPrefix(line, "{") {
		rest, err := parseLabels(line[1:], s.labels)
		if err != nil {
			return s, fmt.Errorf("%s: %w", s.name, err)
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("%s has no value", s.name)
	}
	value, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("%s: value %q: %w", s.name, fields[0], err)
	}
	s.value = value
	return s, nil
}

// parseLabels reads 'a="x",b="y"}' into labels and returns what follows the '}'.
func parseLabels(text string, labels map[string]string) (string, error) {
	for {
		text = strings.TrimLeft(text, " ,")
		if rest, ok := strings.CutPrefix(text, "}"); ok {
			return rest, nil
		}
		name, rest, ok := strings.Cut(text, "=")
		if !ok || !strings.HasPrefix(rest, "\"") {
			return "", fmt.Errorf("malformed labels at %q", text)
		}
		value, rest, err := unquoteLabelValue(rest[1:])
		if err != nil {
			return "", err
		}
		labels[strings.TrimSpace(name)] = value
		text = rest
	}
}

// unquoteLabelValue reads a label value up to its closing quote, undoing the
// escapes \\, \" and \n, and returns what follows the quote.
func unquoteLabelValue(text string) (string, string, error) {
	var value strings.Builder
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"':
			return value.String(), text[i+1:], nil
		case c == '\\' && i+1 < len(text):
			i++
			if text[i] == 'n' {
				value.WriteByte('\n')
			} else {
				value.WriteByte(text[i])
			}
		default:
			value.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated label value %q", text)
}

// includes tells whether labels has every pair of match.
func includes(labels, match map[string]string) bool {
	for key, want := range match {
		if got, ok := labels[key]; !ok || got != want {
			return false
		}
	}
	return true
}
