package replay

import "context"

// Each reads key's retained frames after the cursor after, a page of
// [DefaultPageBytes] at a time, and calls fn with each in seq order, up to
// the latest seq the last page's bounds give (docs/contract.md section
// 11.2). It returns those bounds. fn's error stops it and is returned, as
// are the window's.
func Each(ctx context.Context, w Window, key Key, after int64, fn func(Frame) error) (Bounds, error) {
	for {
		b, frames, err := w.Read(ctx, key, after, DefaultPageBytes)
		if err != nil {
			return b, err
		}
		for _, f := range frames {
			if err := fn(f); err != nil {
				return b, err
			}
			after = f.Seq
		}
		if after >= b.Latest || len(frames) == 0 {
			return b, nil
		}
	}
}
