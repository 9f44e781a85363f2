package stats

import "testing"

func TestMean(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{4}, 4},
		{[]float64{1, 2, 3, 4}, 2.5},
	}
	for _, tt := range tests {
		if got := Mean(tt.xs); got != tt.want {
			t.Errorf("Mean(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

func TestMax(t *testing.T) {
	if got := Max([]float64{3, 9, 1}); got != 9 {
		t.Errorf("Max = %v, want 9", got)
	}
}
