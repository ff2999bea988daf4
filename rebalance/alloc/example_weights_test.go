package alloc_test

import (
	"fmt"

	"github.com/zkcoord/zkcoord/rebalance/alloc"
)

// Three clients of capacities 1, 2 and 3 share twelve resources; a fourth
// of capacity 2 joins, and only its share moves.
func ExampleWeightedSticky() {
	clients := []string{"c_1", "c_2", "c_3"}
	var resources []string
	for i := range 12 {
		resources = append(resources, fmt.Sprintf("r%02d", i))
	}
	cw := alloc.Weights{"c_2": 2, "c_3": 3} // c_1 weighs 1
	a := alloc.WeightedBalanced(clients, cw, resources, nil)
	for _, c := range a.Clients() {
		fmt.Println(c, len(a[c]))
	}
	cw["c_4"] = 2
	b := alloc.WeightedSticky(a, append(clients, "c_4"), cw, resources, nil)
	fmt.Println("moved:", alloc.Moved(a, b))
	for _, c := range b.Clients() {
		fmt.Println(c, len(b[c]))
	}
	// Output:
	// c_1 2
	// c_2 4
	// c_3 6
	// moved: [r01 r05 r11]
	// c_1 1
	// c_2 3
	// c_3 5
	// c_4 3
}

// A result of an allocation function that leaves a resource out is
// refused.
func ExampleRun() {
	in := alloc.Input{Clients: []string{"c_1", "c_2"}, Resources: []string{"a", "b", "c"}}
	firstTwo := func(in alloc.Input) (alloc.Assignment, error) {
		return alloc.Assignment{in.Clients[0]: in.Resources[:2]}, nil
	}
	_, err := alloc.Run(firstTwo, in)
	fmt.Println(err)
	all := func(in alloc.Input) (alloc.Assignment, error) {
		return alloc.Assignment{in.Clients[1]: in.Resources}, nil
	}
	a, err := alloc.Run(all, in)
	fmt.Println(a, err)
	// Output:
	// alloc: invalid assignment: 1 of 3 resources unowned: c
	// map[c_1:[] c_2:[a b c]] <nil>
}
