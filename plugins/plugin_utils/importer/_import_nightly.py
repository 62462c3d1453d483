# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Read one of SGLang's nightly Ascend performance tests (``test/registered/{npu,ascend}/performance/``) into the
``Document`` the page importer reads, so that the same checks apply: the release's real parser, the environment
and credential checks, the operator's model and draft model paths in place of the test's.

Pure; no Ansible import.  A test file is untrusted input: it is parsed with ``ast`` and never executed or imported.
Only literals are read (strings, numbers, lists, dicts, module-level names bound to literals); a name the test
imports is kept as a placeholder where the harness fills it (the model paths, the NIC), and anything else a
configuration value needs is refused naming its line.

Two shapes are read:

- a test class with ``model``, ``other_args`` and ``envs`` (one PD-mixed server, ``TestAscendPerformance...``) or
  a ``model_config`` dict with ``model_path``, ``other_args`` and ``node_envs`` (one PD-mixed instance on several
  nodes, ``...PdMix...``);
- a ``model_config`` (``MODEL_CONFIG``) with ``prefill_args``/``decode_args``, their ``*_envs`` and the router's
  (``...PdSep...``): the instance counts come from the file name (``1p1d``, ``2p1d``), since the harness takes the
  hosts from its own inventory.

The class attributes give the benchmark (``dataset_name``, ``input_len``, ``output_len``, ``max_concurrency``,
``num_prompts``, ``random_range_ratio``, the prefix ``repeat_rate``) and the thresholds (``tpot``, ``ttft``,
``output_token_throughput``, ``mean_e2e_latency``).  The deployment and benchmark are written as the script and
command a page would print, and the section's key/value lines as a page's, so that ``import_section`` reads them.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import shlex
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import (
    Document, ImportRefusal, Lines, Section)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import NODE_DEVICES

# The largest test file is about 6 000 characters and 1 500 syntax nodes; a file far beyond is not a test.
MAX_CHARACTERS = 256 * 1024
MAX_NODES = 50_000
MAX_DEPTH = 32  # names bound to names bound to ...: a chain this long is no configuration
MAX_NUMBER = 10 ** 9  # a computed count (prompts, tokens) beyond this is no configuration
# The harness picks its own ports; the profiles take the ports the pages use for the same roles.
# The pages' placeholder of the prefill hosts (the first one serves the MemFabric store).
PREFILL_HOST = "your prefill ip{n}"
# Flags the deployment gives each host of a multi-node instance itself (its rank, the address of its rank 0).
HOST_FLAGS = ("--node-rank", "--dist-init-addr")
PORTS = {"mixed": 6688, "prefill": 8000, "decode": 8001, "bootstrap": 8998, "router": 6688, "dist_init": 5000}
# Names the harness fills: the NIC of the hosts (HCCL/GLOO bind to it), and the model paths (the operator's).
NIC_NAMES = ("NIC_NAME",)
_PATH_NAME = re.compile(r"^[A-Z][A-Z0-9_]*_PATH$")
# What each shape reads from the test class (the rest of the class is the harness's business).
BENCH_ATTRIBUTES = ("dataset_name", "input_len", "output_len", "max_concurrency", "num_prompts", "random_range_ratio",
                    "repeat_rate", "aisbench_repeat_rate", "request_rate", "seed", "backend", "image_resolution",
                    "image_count")
THRESHOLDS = {"tpot": "TPOT", "ttft": "TTFT", "output_token_throughput": "Output Throughput",
              "mean_e2e_latency": "E2E Latency"}
_LOOPBACK_STORE = re.compile(r"tcp://(?:127\.0\.0\.1|localhost):(\d{1,5})")
_RESOLUTION = re.compile(r"\d{2,5}x\d{2,5}|\d{3,4}p|[124]k")
_ACCURACY = re.compile(r"_(gpqa|aime\d*)$")
_QUANT = re.compile(r"_(w8a8|w4a8|bf16|fp8|w8a8c8)(?:_|$)")
_PD_COUNTS = re.compile(r"_(\d+)p(\d+)d_")
_CARDS = re.compile(r"_(\d+)p_|_(\d+)p$")
_TPOT = re.compile(r"_(\d+(?:p\d+)?)ms(?:_|$)")


class Placeholder(str):
    """A value the harness fills (an imported name): the script gets the page's placeholder for it."""

    __slots__ = ()


@dataclasses.dataclass
class NightlyTest:
    """What one test file configures, values as read (placeholders for imported names)."""

    name: str
    test_class: str
    shape: str  # pd_mixed | pd_separation
    model_path: str  # the imported name of the model path
    roles: dict[str, dict[str, Any]]  # role -> {args: [...], env: {...}, instances: n}
    router_args: list[Any]
    router_env: dict[str, Any]
    bench: dict[str, Any]
    thresholds: dict[str, float]
    accuracy: bool


def refuse(where: str, node: ast.AST | None, message: str) -> ImportRefusal:
    line = getattr(node, "lineno", None)
    return ImportRefusal(f"{where}{f' line {line}' if line else ''}: {message}")


class _Reader:
    """Module- and class-level bindings, evaluated on demand from literals only."""

    def __init__(self, tree: ast.Module, name: str, constants: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.constants = dict(constants or {})
        self.imported: set[str] = set()
        self.module: dict[str, ast.AST] = {}
        self.scope: dict[str, ast.AST] = {}  # the test class's attributes, once parse_test has found the class
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom):
                self.imported |= {alias.asname or alias.name for alias in stmt.names}
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self.module[stmt.targets[0].id] = stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                self.module[stmt.target.id] = stmt.value

    def value(self, node: ast.AST, what: str, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise refuse(self.name, node, f"{what}: names bound to names more than {MAX_DEPTH} deep")
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)) or \
                isinstance(node, ast.Constant) and node.value is None:
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise refuse(self.name, node, f"{what}: an unpacked list is not a literal")
            return [self.value(e, what, depth + 1) for e in node.elts]
        if isinstance(node, ast.Dict):
            out = {}
            for key, val in zip(node.keys, node.values):
                if key is None:
                    raise refuse(self.name, val, f"{what}: an unpacked dict (**) is not a literal")
                k = self.value(key, what, depth + 1)
                if not isinstance(k, str):
                    raise refuse(self.name, key, f"{what}: a key that is not a string")
                out[k] = self.value(val, f"{what}[{k}]", depth + 1)
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
            return -node.operand.value
        if isinstance(node, ast.Name):
            if node.id in self.scope:  # the test class's own attribute (num_prompts = max_concurrency * 4)
                return self.value(self.scope[node.id], what, depth + 1)
            if node.id in self.module:
                return self.value(self.module[node.id], what, depth + 1)
            if node.id in self.imported and (node.id in NIC_NAMES or _PATH_NAME.match(node.id)):
                return Placeholder(node.id)
            if node.id in self.imported and node.id in self.constants:
                # A harness constant whose value a maintainer recorded (the file cannot say it).
                return self.constants[node.id]
            raise refuse(self.name, node, f"{what}: '{node.id}' is not a literal the file binds (nor a model path or "
                                          "the NIC the harness fills)")
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, what, depth)
        if _is_float_inf(node):
            return float("inf")
        if isinstance(node, (ast.BinOp, ast.Call)):
            return self._arithmetic(node, what, depth)
        raise refuse(self.name, node, f"{what}: {type(node).__name__} is not a literal (the importer reads literals "
                                      "only and never runs the test)")

    def _arithmetic(self, node: ast.AST, what: str, depth: int) -> int:
        """Whole-number arithmetic on literals (``int(max_concurrency) * 4``): +, -, * and // of integers, and
        int() of one, computed here without running anything; any other operation or call is refused."""
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id == "int" and len(node.args) == 1
                    and not node.keywords):
                raise refuse(self.name, node, f"{what}: a call is not a literal (only int() of a whole number is "
                                              "read; the importer never runs the test)")
            result = self.value(node.args[0], what, depth + 1)
            if isinstance(result, str) and re.fullmatch(r"[0-9]{1,9}", result):
                result = int(result)
        else:
            ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}
            operation = ops.get(type(node.op))
            left, right = self.value(node.left, what, depth + 1), self.value(node.right, what, depth + 1)
            whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right))
            if operation is None or not whole or (isinstance(node.op, ast.FloorDiv) and right == 0):
                raise refuse(self.name, node, f"{what}: only +, -, * and // of whole numbers are read")
            result = operation(left, right)
        if not isinstance(result, int) or isinstance(result, bool) or abs(result) > MAX_NUMBER:
            raise refuse(self.name, node, f"{what}: not a whole number up to {MAX_NUMBER}")
        return result

    def _fstring(self, node: ast.JoinedStr, what: str, depth: int) -> list[Any]:
        """An f-string as its parts: text, placeholders and ``$NAME`` for ``os.environ.get("NAME", ...)``
        (the PYTHONPATH the harness extends); anything else is refused."""
        parts: list[Any] = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion == -1:
                env = _environ_get(part.value)
                if env:
                    parts.append(("env", env))
                else:
                    inner = self.value(part.value, what, depth + 1)
                    if not isinstance(inner, (str, int, float)):
                        raise refuse(self.name, part, f"{what}: an f-string part that is not a string or a number")
                    parts.append(inner)
            else:
                raise refuse(self.name, part, f"{what}: an f-string part the importer does not read")
        return ["__fstring__", *parts]


def _is_float_inf(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" \
        and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
        and str(node.args[0].value).lower() in ("inf", "infinity")


def _environ_get(node: ast.AST) -> str | None:
    """``os.environ.get("NAME", "")`` -> NAME (read as text, never called)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "environ" \
            and isinstance(node.func.value.value, ast.Name) and node.func.value.value.id == "os" \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", node.args[0].value):
        return node.args[0].value
    return None


def parse_test(text: str, name: str, constants: Mapping[str, Any] | None = None) -> NightlyTest:
    """The configuration of one test file (``name``: its path, for messages and the shape hints of its name;
    ``constants``: recorded values of harness constants the file imports, name -> string or number)."""
    tree = _syntax_tree(text, name, constants)
    reader = _Reader(tree, name, constants)
    cls, attrs = _test_class(tree, name)
    reader.scope = attrs

    def attr(key: str, default: Any = None) -> Any:
        return reader.value(attrs[key], f"{cls.name}.{key}") if key in attrs else default

    base = re.sub(r"\.py$", "", name.rsplit("/", 1)[-1])
    config = attr("model_config")
    if config is not None and not isinstance(config, dict):
        raise refuse(name, attrs["model_config"], f"{cls.name}.model_config is not a dict")
    where_config = attrs.get("model_config", cls)
    if config and ("prefill_args" in config or "decode_args" in config):
        shape = "pd_separation"
        counts = _PD_COUNTS.search(base + "_")
        if not counts:
            raise refuse(name, where_config, "a PD test whose file name gives no instance counts (1p1d, 2p1d, ...): "
                                             "the harness takes its hosts from its own inventory")
        roles = {}
        for role, count in (("prefill", int(counts.group(1))), ("decode", int(counts.group(2)))):
            args = config.get(f"{role}_args")
            if not isinstance(args, list):
                raise refuse(name, where_config, f"model_config has no {role}_args list")
            roles[role] = {"args": args, "env": _env(config.get(f"{role}_envs") or {}, name, where_config, role),
                           "instances": count}
        router_args = config.get("router_args") or []
        router_env = _env(config.get("router_envs") or {}, name, where_config, "router")
        model = config.get("model_path")
    else:
        shape = "pd_mixed"
        if config:
            args, env, model = config.get("other_args"), config.get("node_envs") or config.get("envs") or {}, \
                config.get("model_path")
        else:
            args, env, model = attr("other_args"), attr("envs") or {}, attr("model")
        if not isinstance(args, list):
            raise refuse(name, where_config, "no server arguments (other_args) in the test class or its "
                                             "model_config")
        roles = {"mixed": {"args": args, "env": _env(env, name, where_config, "mixed"), "instances": 1}}
        router_args, router_env = [], {}
    if not isinstance(model, Placeholder) or not _PATH_NAME.match(model):
        raise refuse(name, where_config, "the model path is not a model path constant of the harness")
    bench = {key: attr(key) for key in BENCH_ATTRIBUTES if key in attrs}
    thresholds = {}
    for key in THRESHOLDS:
        value = attr(key)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise refuse(name, attrs[key], f"{cls.name}.{key} is not a number")
            thresholds[key] = value
    return NightlyTest(name=name, test_class=cls.name, shape=shape, model_path=str(model), roles=roles,
                       router_args=list(router_args), router_env=router_env, bench=bench, thresholds=thresholds,
                       accuracy=bool(_ACCURACY.search(base)))


def _syntax_tree(text: str, name: str, constants: Mapping[str, Any] | None) -> ast.Module:
    """The file's syntax tree, within the bounds on size and node count (the file is untrusted input)."""
    for key, value in (constants or {}).items():
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ImportRefusal(f"{name}: the recorded value of {key} is not a string or a number")
    if len(text) > MAX_CHARACTERS:
        raise ImportRefusal(f"{name}: {len(text)} characters, more than the {MAX_CHARACTERS} a test file may have")
    try:
        tree = ast.parse(text, filename=name)
    except SyntaxError as exc:
        raise ImportRefusal(f"{name} line {exc.lineno}: not Python the importer can parse ({exc.msg})") from None
    count = sum(1 for _node in ast.walk(tree))
    if count > MAX_NODES:
        raise ImportRefusal(f"{name}: {count} syntax nodes, more than the {MAX_NODES} a test file may have")
    return tree


def _test_class(tree: ast.Module, name: str) -> tuple[ast.ClassDef, dict[str, ast.AST]]:
    """The file's one performance test class and its attributes' value nodes, by name."""
    # A file may hold an accuracy class beside the performance one (same server, a GPQA/AIME run): not a
    # configuration of its own.
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef)
               and any(_base_name(b).endswith("TestCaseBase") and "Accuracy" not in _base_name(b) for b in c.bases)]
    if len(classes) != 1:
        raise ImportRefusal(f"{name}: {len(classes)} test classes derived from a performance TestCaseBase; the "
                            "importer reads files of exactly one")
    attrs: dict[str, ast.AST] = {}
    for stmt in classes[0].body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            attrs[stmt.targets[0].id] = stmt.value
    return classes[0], attrs


def _base_name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _env(value: Any, name: str, node: ast.AST, role: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise refuse(name, node, f"the {role} environment is not a dict")
    for key in value:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise refuse(name, node, f"the {role} environment names '{key}', which is not a variable name")
    return value


# --------------------------------------------------------------------------- the page a test would be


def _word(value: Any, test: NightlyTest, where: str) -> str:
    """One argument of a command line, as a page would print it."""
    if isinstance(value, Placeholder):
        if value == test.model_path:
            return "$MODEL_PATH"
        if _PATH_NAME.match(value):
            return "$DRAFT_MODEL_PATH"
        raise ImportRefusal(f"{where}: {value} stands for a NIC, not an argument")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ImportRefusal(f"{where}: the argument {value!r} is not a string or a number")
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    _plain_text(str(value), where)
    return shlex.quote(str(value))


def _plain_text(text: str, where: str) -> None:
    # The script is read line by line: a line break or other control character inside a value would make a
    # second command of it.
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ImportRefusal(f"{where}: the value {text[:40]!r} holds a control character (a line break?)")


def _env_line(key: str, value: Any, test: NightlyTest, where: str) -> str:
    if isinstance(value, Placeholder) and value in NIC_NAMES:
        return f"export {key}=<network-interface>"
    store = _LOOPBACK_STORE.fullmatch(value) if key == "ASCEND_MF_STORE_URL" and isinstance(value, str) else None
    if store and test.shape == "pd_separation":
        # The harness runs on one host's view: its loopback store is the one the first prefill host serves, as
        # the pages write it.
        return f'export {key}="tcp://{PREFILL_HOST.format(n=1)}:{store.group(1)}"'
    parts = value[1:] if isinstance(value, list) and value[:1] == ["__fstring__"] else [value]
    text = ""
    for part in parts:
        if isinstance(part, tuple):
            text += "${" + part[1] + "}"
        elif isinstance(part, Placeholder):
            if part in NIC_NAMES:
                raise ImportRefusal(f"{where}: {key} holds the NIC in a longer value")
            text += "${MODEL_PATH}" if part == test.model_path else "${DRAFT_MODEL_PATH}"
        elif isinstance(part, (str, int, float)) and not isinstance(part, bool):
            _plain_text(str(part), where)
            text += re.sub(r'(["\\$`])', r"\\\1", str(part))
        else:
            raise ImportRefusal(f"{where}: {key} is not a string")
    return f'export {key}="{text}"'


def _flags(args: list[Any], test: NightlyTest, where: str) -> str:
    return " ".join(_word(v, test, where) for v in args)


def _has(args: list[Any], flag: str) -> bool:
    return any(isinstance(a, str) and a == flag for a in args)


def _int_arg(args: list[Any], flag: str, default: int) -> int:
    for i, a in enumerate(args[:-1]):
        if a == flag and re.fullmatch(r"\d+", str(args[i + 1])):
            return int(args[i + 1])
    return default


def deployment_script(test: NightlyTest) -> str:
    """The deployment a page would print for the test (host-matching loops over the page's placeholders)."""
    where = test.name
    lines = ["MODEL_PATH=xxx"]
    if any(isinstance(v, Placeholder) and v != test.model_path and v not in NIC_NAMES
           for spec in test.roles.values() for v in [*spec["args"], *_env_values(spec["env"])]):
        lines.append("DRAFT_MODEL_PATH=xxx")
    lines.append("LOCAL_HOST1=`hostname -I|awk -F \" \" '{print$1}'`")
    if test.shape == "pd_mixed":
        spec = test.roles["mixed"]
        nnodes = _int_arg(spec["args"], "--nnodes", 1)
        lines += [_env_line(k, v, test, where) for k, v in spec["env"].items()]
        if nnodes == 1:
            lines.append(f"python3 -m sglang.launch_server --model-path $MODEL_PATH --host 127.0.0.1 "
                         f"--port {PORTS['mixed']} {_flags(spec['args'], test, where)}")
            return "\n".join(lines)
        lines.append("IPs=(" + " ".join(f"'IP{i + 1}'" for i in range(nnodes)) + ")")
        lines += _loop("IPs", "mixed", spec, test, nnodes, extra="")
        return "\n".join(lines)
    lines.append("P_IP=(" + " ".join(f"'{PREFILL_HOST.format(n=i + 1)}'" for i in range(_hosts(test, "prefill"))) + ")")
    lines.append("D_IP=(" + " ".join(f"'your decode ip{i + 1}'" for i in range(_hosts(test, "decode"))) + ")")
    for role, array in (("prefill", "P_IP"), ("decode", "D_IP")):
        spec = _with_store(test, test.roles[role])
        nnodes = _int_arg(spec["args"], "--nnodes", 1)
        extra = f" --disaggregation-bootstrap-port $(({PORTS['bootstrap']}+$i/{nnodes}))" if role == "prefill" else ""
        lines += _loop(array, role, spec, test, nnodes, extra)
    lines += [_env_line(k, v, test, where) for k, v in test.router_env.items()]
    prefill = " ".join(f"--prefill http://P_IP:{PORTS['prefill']} {PORTS['bootstrap'] + i}"
                       for i in range(test.roles["prefill"]["instances"]))
    decode = " ".join(f"--decode http://D_IP:{PORTS['decode']}" for _i in range(test.roles["decode"]["instances"]))
    lines.append(f"python3 -m sglang_router.launch_router --pd-disaggregation {prefill} {decode} --host 127.0.0.1 "
                 f"--port {PORTS['router']} {_flags(test.router_args, test, where)}".rstrip())
    return "\n".join(lines)


def _with_store(test: NightlyTest, spec: dict[str, Any]) -> dict[str, Any]:
    """Every PD server talks to the one MemFabric store (the pages set it on prefill and decode): a test that sets it
    on one role leaves the other's to its harness's base class."""
    stores = [s["env"]["ASCEND_MF_STORE_URL"] for s in test.roles.values() if "ASCEND_MF_STORE_URL" in s["env"]]
    if not stores or "ASCEND_MF_STORE_URL" in spec["env"]:
        return spec
    return {**spec, "env": {**spec["env"], "ASCEND_MF_STORE_URL": stores[0]}}


def _env_values(env: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for value in env.values():
        out += value[1:] if isinstance(value, list) and value[:1] == ["__fstring__"] else [value]
    return out


def _hosts(test: NightlyTest, role: str) -> int:
    spec = test.roles[role]
    return spec["instances"] * _int_arg(spec["args"], "--nnodes", 1)


def _loop(array: str, role: str, spec: dict[str, Any], test: NightlyTest, nnodes: int, extra: str) -> list[str]:
    """The host-matching loop of one role: each host of the array starts its rank of its instance."""
    where = test.name
    # What the loop gives each host itself: the prefill's bootstrap port (the router names it), and a
    # multi-node instance's rank and address (one test gives "--node-rank 0" for both hosts; the harness
    # ranks each host).
    args = _without(spec["args"], HOST_FLAGS if nnodes > 1 else (), where)
    if role == "prefill":
        args = _without(args, ("--disaggregation-bootstrap-port",), where)
    rank = ""
    if nnodes > 1:
        rank = (f" --node-rank $(($i%{nnodes})) --dist-init-addr ${{{array}[$(($i/{nnodes}*{nnodes}))]}}:"
                f"{PORTS['dist_init']}")
    port = PORTS["mixed" if role == "mixed" else role]
    return [f'for i in "${{!{array}[@]}}";', "do", f'    if [[ "$LOCAL_HOST1" == "${{{array}[$i]}}" ]];', "    then",
            *[f"        {_env_line(k, v, test, where)}" for k, v in spec["env"].items()],
            f"        python3 -m sglang.launch_server --model-path $MODEL_PATH --host ${{{array}[$i]}} --port {port}"
            f"{extra}{rank} {_flags(args, test, where)}",
            "        break", "    fi", "done"]


def _without(args: list[Any], flags: tuple[str, ...], where: str) -> list[Any]:
    """The arguments without the given flags and their values."""
    out, skip = [], False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif isinstance(arg, str) and arg in flags:
            if i + 1 >= len(args) or isinstance(args[i + 1], str) and args[i + 1].startswith("--"):
                raise ImportRefusal(f"{where}: {arg} without a value")
            skip = True
        else:
            out.append(arg)
    return out


def dataset_label(tokens: int) -> str:
    """3500 -> 3.5K, 131072 -> 128K, 3584 -> 3.6K, 11000 -> 11K, 300 -> 300: the pages' way of writing lengths."""
    if tokens % 1024 == 0 and tokens >= 1024:
        return f"{tokens // 1024}K"
    if tokens >= 1000:
        return f"{round(tokens / 1000, 1):g}K"
    return str(tokens)


def bench_command(test: NightlyTest) -> tuple[str, str]:
    """The sglang.bench_serving command of the test's benchmark and its dataset label."""
    where = test.name
    b = test.bench
    for key in ("input_len", "output_len", "max_concurrency", "num_prompts"):
        if not isinstance(b.get(key), int) or isinstance(b.get(key), bool) or b[key] <= 0:
            raise ImportRefusal(f"{where}: the test class gives no positive integer {key}")
    rate = b.get("repeat_rate", b.get("aisbench_repeat_rate"))
    dataset = str(b.get("dataset_name") or "random")
    host = f"--host 127.0.0.1 --port {PORTS['router' if test.shape == 'pd_separation' else 'mixed']}"
    label = f"{dataset_label(b['input_len'])}+{dataset_label(b['output_len'])}"
    common = f"--max-concurrency {b['max_concurrency']} --num-prompts {b['num_prompts']}"
    if b.get("request_rate") is not None:
        common += f" --request-rate {_word(b['request_rate'], test, where)}"
    if rate is not None:
        if not isinstance(rate, (int, float)) or not 0 < rate < 1:
            raise ImportRefusal(f"{where}: the prefix repeat rate {rate!r} is not a fraction")
        # One group sharing a system prompt of the repeated share of the input: the pages' prefix benchmarks.
        system = round(b["input_len"] * rate)
        label += f" ({round(rate * 100)}% prefix cache hit rate)"
        return (f"python3 -m sglang.bench_serving --dataset-name generated-shared-prefix --backend sglang {host} "
                f"--gsp-num-groups 1 --gsp-prompts-per-group {b['num_prompts']} --gsp-system-prompt-len {system} "
                f"--gsp-question-len {b['input_len'] - system} --gsp-output-len {b['output_len']} {common}", label)
    if dataset == "image":
        return _image_bench(test, host, common)
    if dataset != "random":
        raise ImportRefusal(f"{where}: dataset_name {dataset!r} without a repeat rate; the importer maps the random "
                            "dataset, the image one and the shared-prefix one")
    ratio = b.get("random_range_ratio", 1)
    return (f"python3 -m sglang.bench_serving --dataset-name random --backend sglang {host} {common} "
            f"--random-input-len {b['input_len']} --random-output-len {b['output_len']} --random-range-ratio "
            f"{_word(ratio, test, where)}", label)


def _image_bench(test: NightlyTest, host: str, common: str) -> tuple[str, str]:
    """bench_serving's image dataset: random text of input_len tokens with image_count images of the resolution
    (the pages label it "1024x1024 (30)+1K")."""
    where, b = test.name, test.bench
    resolution, count = b.get("image_resolution"), b.get("image_count", 1)
    if not isinstance(resolution, str) or not _RESOLUTION.fullmatch(resolution):
        raise ImportRefusal(f"{where}: the image benchmark's image_resolution {resolution!r} is not WxH, 1080p, ...")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 < count <= 64:
        raise ImportRefusal(f"{where}: the image benchmark's image_count {count!r} is not a small positive integer")
    backend = b.get("backend", "sglang-oai-chat")
    if backend not in ("sglang-oai-chat", "sglang"):
        raise ImportRefusal(f"{where}: the image benchmark's backend {backend!r} is not one bench_serving serves "
                            "images through")
    label = f"{resolution} ({b['input_len']})+{dataset_label(b['output_len'])}"
    return (f"python3 -m sglang.bench_serving --dataset-name image --backend {backend} {host} {common} "
            f"--random-input-len {b['input_len']} --random-output-len {b['output_len']} --random-range-ratio "
            f"{_word(b.get('random_range_ratio', 1), test, where)} --image-resolution {resolution} "
            f"--image-count {count}", label)


def _cards(test: NightlyTest, hardware: str) -> int:
    """Cards the servers occupy: the devices of every instance (tp x pp), two dies per A3 card."""
    dies = 0
    for spec in test.roles.values():
        tp = _int_arg(spec["args"], "--tp-size", _int_arg(spec["args"], "--tp", 1))
        dies += spec["instances"] * tp * _int_arg(spec["args"], "--pp-size", 1)
    return dies // 2 if hardware == "A3" and dies > 1 else dies


def section_of(test: NightlyTest, model: str, where: str) -> Section:
    """The section a page would hold for the test: key/value lines, the deployment script and the benchmark."""
    if test.accuracy:
        raise ImportRefusal(f"{where}: an accuracy variant (gpqa/aime) of a performance test: its configuration is "
                            "the performance test's")
    base = re.sub(r"\.py$", "", where.rsplit("/", 1)[-1])
    targets = _targets(test, base, where)
    hardware = "A2" if base.endswith("_a2") else "A3"
    _fits_the_nodes(test, hardware, where)
    _has_its_draft_model(test, where)
    # The test's name counts the cards as the pages do ("8p": 8 cards, "1p1d_16p": 16), which is not always the
    # devices / 2 of A3 (a tp 2 server is "1p" in one test and "2P" on its page); without a count, the devices.
    # An A2 card is one device: its tests keep the count of the A3 test they were written from ("2p" for tp 4).
    named = _CARDS.search(base)
    cards = int(named.group(1) or named.group(2)) if named and hardware == "A3" else _cards(test, hardware)
    bench, label = bench_command(test)
    meta = {"Model": model, "Hardware": f"Atlas 800I {hardware}", "Cards": str(cards),
            "Deploy Mode": "PD Separation" if test.shape == "pd_separation" else "PD Mixed", "Dataset": label,
            **targets}
    quant = quantization_of(test, base)
    if quant:
        meta["Quantization"] = quant
    script = deployment_script(test)
    return Section(document=base, title=base, line=1, meta=meta, deploy=Lines(script, 1), bench=bench, bench_line=1,
                   result=Lines("", 1))


def _fits_the_nodes(test: NightlyTest, hardware: str, where: str) -> None:
    """Each instance's devices (tp x pp) spread over its --nnodes hosts fit a host of the hardware: GLM-5.2's 2P1D
    test gives its decode tp 32 on one node, which no A3 host holds (the harness's own layout is not in the file)."""
    for role, spec in test.roles.items():
        nnodes = _int_arg(spec["args"], "--nnodes", 1)
        devices = _int_arg(spec["args"], "--tp-size", _int_arg(spec["args"], "--tp", 1)) \
            * _int_arg(spec["args"], "--pp-size", 1)
        if devices > NODE_DEVICES[hardware] * nnodes:
            raise ImportRefusal(f"{where}: the {role} instance runs {devices} devices (tp x pp) on {nnodes} node(s); "
                                f"an {hardware} node has {NODE_DEVICES[hardware]}")


def _has_its_draft_model(test: NightlyTest, where: str) -> None:
    """An EAGLE3 server names its draft model (the planner refuses one without): a test whose file gives none
    leaves it to its harness, which the file does not show."""
    for role, spec in test.roles.items():
        args = spec["args"]
        algorithm = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--speculative-algorithm"), None)
        if algorithm == "EAGLE3" and not _has(args, "--speculative-draft-model-path"):
            raise ImportRefusal(f"{where}: the {role} arguments run EAGLE3 without --speculative-draft-model-path; "
                                "the file does not say which draft model its harness gives")


def _targets(test: NightlyTest, base: str, where: str) -> dict[str, str]:
    """The section's target: the TPOT the test asserts, else the one of its name (..._50ms: names go stale where
    the threshold follows the page, DeepSeek-R1's ..._in6k_out1k6_15ms asserts the page's 20.5 ms), else the TTFT
    it asserts (a configuration measured by its first token)."""
    named_tpot = _TPOT.search(base)
    if "tpot" in test.thresholds:
        return {"TPOT": f"{test.thresholds['tpot']:g}ms"}
    if named_tpot:
        return {"TPOT": f"{float(named_tpot.group(1).replace('p', '.')):g}ms"}
    if "ttft" in test.thresholds:
        return {"TTFT": f"{test.thresholds['ttft']:g}ms"}
    checked = ", ".join(f"{k} {v:g}" for k, v in test.thresholds.items()) or "no threshold"
    raise ImportRefusal(f"{where}: the test sets no TPOT or TTFT threshold ({checked}) and its name no TPOT target; "
                        "a profile is planned and benchmarked against a TPOT or TTFT target")


def quantization_of(test: NightlyTest, base: str) -> str | None:
    """The weights' quantization: the file name's (..._w8a8_...), else the harness's model path constant's
    (QWEN3_6_27B_W8A8_MODEL_PATH), else BF16 where no server quantizes (the harness keeps a path per
    quantization, and the unquantized one names none: QWEN3_6_27B_MODEL_PATH beside ..._W8A8_...)."""
    for text in (base + "_", "_" + test.model_path.lower() + "_"):
        found = _QUANT.search(text)
        if found:
            return found.group(1).upper()
    if not any(_has(spec["args"], "--quantization") for spec in test.roles.values()):
        return "BF16"
    return None


def read_nightly(text: str, name: str, model: str, constants: Mapping[str, Any] | None = None) -> Document:
    """One test file as a one-section document (``model``: the model's name as the pages write it)."""
    test = parse_test(text, name, constants)
    return Document(name=name, id=re.sub(r"\.py$", "", name.rsplit("/", 1)[-1]), form="nightly", rows=[],
                    sections=[section_of(test, model, name)])


def thresholds_of(test: NightlyTest) -> dict[str, float]:
    """The test's thresholds under the names a profile's published figures use."""
    names = {"tpot": "tpot_ms", "ttft": "ttft_ms", "output_token_throughput": "output_throughput_tok_s",
             "mean_e2e_latency": "e2e_latency_ms"}
    return {names[k]: v for k, v in test.thresholds.items()}


__all__ = ["NightlyTest", "Placeholder", "bench_command", "deployment_script", "parse_test", "read_nightly",
           "section_of", "thresholds_of"]
