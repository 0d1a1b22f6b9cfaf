"""Progress bars for long work (history export, soak runs): on a terminal only, on stderr, so
piped output stays clean."""

import sys


def track(items, description, total=None):
    items = list(items) if total is None and not hasattr(items, "__len__") else items
    if not sys.stderr.isatty():
        yield from items
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total if total is not None else len(items))
        for item in items:
            yield item
            bar.advance(task)
