#!/usr/bin/env python3
"""Prints the module lists of rules/beam.toml from an installed OTP and Elixir.

  python3 rules/tools/beam_modules.py [/usr/lib/erlang/lib] [/usr/lib/elixir/lib]

OTP's modules are every `ebin/*.beam` of the OTP applications (not of third-party packages
installed beside them: jiffy, cowlib, proper...), plus the preloaded modules the emulator
carries (erlang, prim_*, init, erts_*...), which have no .beam file. Elixir's are the roots of
its standard library's modules (`Elixir.Enum`, `Elixir.String`...) and the Erlang-named
modules its applications hold (`elixir_erl`). The output is TOML arrays of `prefix` entries,
`MODULE:` for Erlang modules (the whole module, functions and `::codeHeader` alike) and
`Elixir.ROOT.` / `Elixir.ROOT:` for Elixir's roots.
"""
import os, re, sys

OTP_LIB = sys.argv[1] if len(sys.argv) > 1 else '/usr/lib/erlang/lib'
ELIXIR_LIB = sys.argv[2] if len(sys.argv) > 2 else '/usr/lib/elixir/lib'
THIRD_PARTY = {'jiffy', 'cowlib', 'cowboy', 'ranch', 'proper', 'meck', 'hex', 'rebar'}
PRELOADED = ['erlang', 'erts_internal', 'erts_code_purger', 'erts_literal_area_collector',
             'erts_dirty_process_signal_handler', 'erts_trace_cleaner', 'erts_beamasm',
             'init', 'prim_buffer', 'prim_eval', 'prim_file', 'prim_inet', 'prim_zip',
             'prim_net', 'prim_socket', 'socket_registry', 'atomics', 'counters',
             'persistent_term', 'zlib', 'erl_init', 'erl_prim_loader', 'erl_tracer']


def beams(app_dir):
    ebin = os.path.join(app_dir, 'ebin')
    if not os.path.isdir(ebin):
        return []
    return sorted(f[:-5] for f in os.listdir(ebin) if f.endswith('.beam'))


otp = set(PRELOADED)
for app in sorted(os.listdir(OTP_LIB)):
    name = re.sub(r'-[0-9][0-9.]*$', '', app)
    if name in THIRD_PARTY:
        continue
    otp.update(beams(os.path.join(OTP_LIB, app)))
elixir_roots, elixir_erlang = set(), set()
for app in sorted(os.listdir(ELIXIR_LIB)):
    for m in beams(os.path.join(ELIXIR_LIB, app)):
        if m.startswith('Elixir.'):
            elixir_roots.add(m.split('.')[1])
        else:
            elixir_erlang.add(m)


def array(items, per_line=6):
    lines, line = [], []
    for item in items:
        line.append("'%s'" % item)
        if len(line) == per_line:
            lines.append('  ' + ', '.join(line) + ','); line = []
    if line:
        lines.append('  ' + ', '.join(line) + ',')
    return '[\n' + '\n'.join(lines) + '\n]'


print('# OTP (%d modules)' % len(otp))
print('prefix = ' + array(sorted(m + ':' for m in otp)))
print('# Elixir (%d roots, %d Erlang-named modules)' % (len(elixir_roots), len(elixir_erlang)))
items = sorted(['Elixir.%s.' % r for r in elixir_roots] + ['Elixir.%s:' % r for r in elixir_roots]
               + [m + ':' for m in elixir_erlang])
print('prefix = ' + array(items, 4))
