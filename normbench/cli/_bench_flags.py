"""`normbench run --bench KIND --PARAM VALUE ...`: the bench's parameters as flags. They are not declared
to click (every bench kind has its own, and a plugin's are known only once it is loaded): this command
class takes every `--name value` that is not one of run's own options out of the arguments before click
parses them, when --bench is given, and leaves them in ctx.meta for suite/adhoc.py to validate."""

from __future__ import annotations

from typer.core import TyperCommand

META_KEY = "normbench.bench_flags"


class BenchFlagsCommand(TyperCommand):
    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if not any(a == "--bench" or a.startswith("--bench=") for a in args):
            return super().parse_args(ctx, args)
        known = {o for p in self.params for o in (*p.opts, *p.secondary_opts)}
        flags, rest = [], []
        i = 0
        while i < len(args):
            arg = args[i]
            name = arg.partition("=")[0]
            if arg.startswith("--") and arg != "--" and name not in known:
                flags.append(arg)
                if "=" not in arg and i + 1 < len(args) and not args[i + 1].startswith("--"):
                    flags.append(args[i + 1])
                    i += 1
            else:
                rest.append(arg)
            i += 1
        ctx.meta[META_KEY] = flags
        return super().parse_args(ctx, rest)
