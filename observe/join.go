package observe

import "context"

// Join returns an Observer that hands every event to each of obs in order,
// each start's context to the next, so that logs and traces can both be on:
//
//	observe.Join(observe.NewSlog(logger), otelchat.New(nil))
//
// Nil entries are dropped; Join of none, or of nils only, returns nil
// (silent), and of one returns it.
func Join(obs ...Observer) Observer {
	var j joined
	for _, o := range obs {
		if o != nil {
			j = append(j, o)
		}
	}
	switch len(j) {
	case 0:
		return nil
	case 1:
		return j[0]
	}
	return j
}

type joined []Observer

func (j joined) Observe(ctx context.Context, e Event) context.Context {
	for _, o := range j {
		ctx = o.Observe(ctx, e)
	}
	return ctx
}
