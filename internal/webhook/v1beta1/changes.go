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

package v1beta1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxChangesShown bounds the changes an error lists; the rest are counted.
const maxChangesShown = 5

// maxValueShown bounds one value in a change (a whole list or object can be long).
const maxValueShown = 120

// unset stands for a field one side does not have.
const unset = "(unset)"

// changes lists what differs between two values of one API type, one
// "path: old -> new" for each field that changed, compared in their JSON form:
// the values read as a user writes them in a manifest (a quantity is 100m, not
// its internal fields), and what the API server stores the same (an absent
// list and an empty one) is no change.
func changes(path *field.Path, oldValue, newValue any) ([]string, error) {
	oldTree, err := jsonTree(oldValue)
	if err != nil {
		return nil, err
	}
	newTree, err := jsonTree(newValue)
	if err != nil {
		return nil, err
	}
	var found []string
	diffTrees(path.String(), oldTree, newTree, &found)
	return found, nil
}

// jsonTree is value as its JSON decodes into maps, lists and scalars.
func jsonTree(value any) (any, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var tree any
	return tree, json.Unmarshal(data, &tree)
}

// diffTrees appends to found each place where a and b differ: it descends
// into objects on both sides and into lists of the same length on both sides,
// and reports anything else that differs as a whole.
func diffTrees(path string, a, b any, found *[]string) {
	aObject, aIsObject := a.(map[string]any)
	bObject, bIsObject := b.(map[string]any)
	if aIsObject && bIsObject {
		for _, key := range unionOfKeys(aObject, bObject) {
			diffFields(path+"."+key, aObject, bObject, key, found)
		}
		return
	}
	aList, aIsList := a.([]any)
	bList, bIsList := b.([]any)
	if aIsList && bIsList && len(aList) == len(bList) {
		for i := range aList {
			diffTrees(fmt.Sprintf("%s[%d]", path, i), aList[i], bList[i], found)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*found = append(*found, fmt.Sprintf("%s: %s -> %s", path, show(a), show(b)))
	}
}

// diffFields compares the field key of two objects, either of which may lack it.
func diffFields(path string, a, b map[string]any, key string, found *[]string) {
	aValue, inA := a[key]
	bValue, inB := b[key]
	switch {
	case inA && inB:
		diffTrees(path, aValue, bValue, found)
	case isEmpty(aValue) && isEmpty(bValue):
		// absent on one side, empty on the other: stored the same
	case inA:
		*found = append(*found, fmt.Sprintf("%s: %s -> %s", path, show(aValue), unset))
	default:
		*found = append(*found, fmt.Sprintf("%s: %s -> %s", path, unset, show(bValue)))
	}
}

func unionOfKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for key := range a {
		keys = append(keys, key)
	}
	for key := range b {
		if _, ok := a[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// isEmpty tells a JSON value that an absent field means as well: nothing, an
// empty list or an empty object.
func isEmpty(value any) bool {
	switch v := value.(type) {
	case nil:
		return true
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// show is a JSON value as a user would write it: a string without quotes, a
// list or an object as compact JSON, shortened.
func show(value any) string {
	if s, ok := value.(string); ok {
		return shorten(s)
	}
	data, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	return shorten(string(data))
}

// shorten cuts s to maxValueShown bytes, at the start of a character so
// that the message stays valid UTF-8.
func shorten(s string) string {
	if len(s) <= maxValueShown {
		return s
	}
	cut := maxValueShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// changeSummary joins changes for an error message, the first
// maxChangesShown of them and a count of the rest.
func changeSummary(found []string) string {
	if len(found) <= maxChangesShown {
		return strings.Join(found, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(found[:maxChangesShown], "; "), len(found)-maxChangesShown)
}
