"""The handlers: each takes the model's arguments and returns a JSON string, also when
something is wrong (the model reads the error and can try again)."""

import ast
import json
import math
import operator

FUNCTIONS = {name: getattr(math, name) for name in (
    "sqrt", "sin", "cos", "tan", "log", "log2", "log10", "exp", "floor", "ceil", "factorial")}
FUNCTIONS.update(abs=abs, round=round)
CONSTANTS = {"pi": math.pi, "e": math.e}
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
             ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


def _evaluate(node):
    """Walk the parsed expression; only numbers, known names and arithmetic pass."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 10_000:
            raise ValueError("exponent too large")
        return OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in FUNCTIONS and not node.keywords:
        return FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args))
    raise ValueError(f"not allowed here: {ast.unparse(node)}")


def calculate(args, **kwargs):
    expression = str(args.get("expression", "")).strip()
    if not expression:
        return json.dumps({"error": "give an expression, e.g. 2**16"})
    try:
        result = _evaluate(ast.parse(expression, mode="eval"))
    except ZeroDivisionError:
        return json.dumps({"expression": expression, "error": "division by zero"})
    except (SyntaxError, ValueError, TypeError, OverflowError) as exc:
        return json.dumps({"expression": expression, "error": f"cannot evaluate: {exc}"})
    return json.dumps({"expression": expression, "result": result})


# Each table maps a unit to its size in the table's base unit.
TABLES = [
    {"mm": 0.001, "cm": 0.01, "m": 1, "km": 1000, "in": 0.0254, "ft": 0.3048, "yd": 0.9144,
     "mi": 1609.344},
    {"mg": 1e-6, "g": 0.001, "kg": 1, "oz": 0.028349523125, "lb": 0.45359237},
    {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4},
    {"ms": 0.001, "s": 1, "min": 60, "h": 3600, "hr": 3600, "day": 86400},
]
TO_KELVIN = {"c": lambda v: v + 273.15, "f": lambda v: (v - 32) * 5 / 9 + 273.15,
             "k": lambda v: v}
FROM_KELVIN = {"c": lambda k: k - 273.15, "f": lambda k: (k - 273.15) * 9 / 5 + 32,
               "k": lambda k: k}


def _convert(value, source, target):
    if source in TO_KELVIN and target in FROM_KELVIN:
        return FROM_KELVIN[target](TO_KELVIN[source](value))
    for table in TABLES:
        if source in table and target in table:
            return value * table[source] / table[target]
    return None


def unit_convert(args, **kwargs):
    source = str(args.get("from_unit", "")).strip()
    target = str(args.get("to_unit", "")).strip()
    try:
        value = float(args.get("value"))
    except (TypeError, ValueError):
        return json.dumps({"error": "value must be a number"})
    result = _convert(value, source.lower(), target.lower())
    if result is None:
        return json.dumps({"error": f"cannot convert {source} to {target}"})
    result = round(result, 6)
    return json.dumps({"input": f"{value:g} {source}", "result": result,
                       "output": f"{result:g} {target}"})
