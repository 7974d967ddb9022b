"""Pieces of the plain-SVG figures the model scripts draw without a plotting library
(scripts/vicsek_fig2a.py, scripts/couzin_fig.py): axes with their ticks, error bars and markers."""


def axes(px, py, xmax, xticks, xfmt=str):
    """The x axis from 0 to xmax and the y axis from 0 to 1 (px, py: data to pixels), ticks at
    xticks (labelled by xfmt) and at y = 0, 0.2, ..., 1."""
    out = [f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(xmax)}" y2="{py(0)}" stroke="black"/>',
           f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(0)}" y2="{py(1)}" stroke="black"/>']
    for x in xticks:
        out.append(f'<line x1="{px(x)}" y1="{py(0)}" x2="{px(x)}" y2="{py(0) + 5}" stroke="black"/>')
        out.append(f'<text x="{px(x)}" y="{py(0) + 20}" text-anchor="middle">{xfmt(x)}</text>')
    for k in range(6):
        y = k * 0.2
        out.append(f'<line x1="{px(0) - 5}" y1="{py(y)}" x2="{px(0)}" y2="{py(y)}" stroke="black"/>')
        out.append(f'<text x="{px(0) - 9}" y="{py(y) + 4}" text-anchor="end">{y:.1f}</text>')
    return out


def error_bar(px, py, x, m, sd, colour):
    """A vertical bar m +- sd at x, clipped to [0, 1]."""
    return (f'<line x1="{px(x):.1f}" y1="{py(max(0, m - sd)):.1f}" x2="{px(x):.1f}" '
            f'y2="{py(min(1, m + sd)):.1f}" stroke="{colour}"/>')


def marker(kind, x, y, c):
    """An open marker at pixel (x, y): circle, square, diamond, triangle or (otherwise) cross."""
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="none" stroke="{c}" stroke-width="1.5"/>'
    if kind == "square":
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="none" stroke="{c}" stroke-width="1.5"/>'
    if kind == "diamond":
        return (f'<polygon points="{x:.1f},{y - 4.5:.1f} {x + 4.5:.1f},{y:.1f} {x:.1f},{y + 4.5:.1f} '
                f'{x - 4.5:.1f},{y:.1f}" fill="none" stroke="{c}" stroke-width="1.5"/>')
    if kind == "triangle":
        return (f'<polygon points="{x:.1f},{y - 4.5:.1f} {x + 4:.1f},{y + 3.5:.1f} {x - 4:.1f},{y + 3.5:.1f}" '
                f'fill="none" stroke="{c}" stroke-width="1.5"/>')
    return (f'<path d="M{x - 4:.1f},{y - 4:.1f} L{x + 4:.1f},{y + 4:.1f} M{x - 4:.1f},{y + 4:.1f} '
            f'L{x + 4:.1f},{y - 4:.1f}" stroke="{c}" stroke-width="1.5"/>')
