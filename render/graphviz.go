package render

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/goccy/go-graphviz"
	"github.com/goccy/go-graphviz/gvc"
)

// The WebAssembly Graphviz is one module for the whole process, not safe
// for concurrent use: renders are serialised and share one instance.
var (
	gvMu sync.Mutex
	gv   *graphviz.Graphviz
)

func renderDOT(ctx context.Context, dot []byte, format graphviz.Format) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gvMu.Lock()
	defer gvMu.Unlock()
	if gv == nil {
		g, err := newGraphviz(ctx)
		if err != nil {
			return nil, fmt.Errorf("start graphviz: %w", err)
		}
		gv = g
	}
	graph, err := graphviz.ParseBytes(dot)
	if err != nil {
		return nil, fmt.Errorf("parse DOT: %w", err)
	}
	defer graph.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, graph, format, &buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", format, err)
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("render %s: graphviz produced nothing", format)
	}
	return buf.Bytes(), nil
}

// newGraphviz starts Graphviz with go-graphviz's PNG renderer patched:
// its bridge reports every bezier as filled (edges came out as solid
// wedges) and it fills shapes without drawing their outline. Every shape
// this package draws is filled (nodes, the legend, arrowheads), and no
// curve is.
func newGraphviz(ctx context.Context) (*graphviz.Graphviz, error) {
	engine := pngEngine{&gvc.ImageRenderer{DefaultRenderEngine: new(gvc.DefaultRenderEngine)}}
	rp, err := gvc.NewRenderPlugin(ctx, "png", engine)
	if err != nil {
		return nil, err
	}
	dp, err := gvc.PNGDevicePlugin(ctx)
	if err != nil {
		return nil, err
	}
	lp, err := gvc.PNGLoadImagePlugin(ctx, engine)
	if err != nil {
		return nil, err
	}
	return graphviz.NewWithPlugins(ctx, rp, dp, lp)
}

type pngEngine struct{ *gvc.ImageRenderer }

func (e pngEngine) BezierCurve(ctx context.Context, job *gvc.Job, a []*gvc.PointFloat, _ bool) error {
	return e.ImageRenderer.BezierCurve(ctx, job, a, false)
}

func (e pngEngine) Polygon(ctx context.Context, job *gvc.Job, a []*gvc.PointFloat, _ bool) error {
	if err := e.ImageRenderer.Polygon(ctx, job, a, true); err != nil {
		return err
	}
	return e.ImageRenderer.Polygon(ctx, job, a, false)
}

func (e pngEngine) Ellipse(ctx context.Context, job *gvc.Job, a []*gvc.PointFloat, _ bool) error {
	if err := e.ImageRenderer.Ellipse(ctx, job, a, true); err != nil {
		return err
	}
	return e.ImageRenderer.Ellipse(ctx, job, a, false)
}

// SVG lays out DOT with Graphviz's dot and returns SVG.
func SVG(ctx context.Context, dot []byte) ([]byte, error) { return renderDOT(ctx, dot, graphviz.SVG) }

// PNG lays out DOT with Graphviz's dot and returns a PNG image.
func PNG(ctx context.Context, dot []byte) ([]byte, error) { return renderDOT(ctx, dot, graphviz.PNG) }
