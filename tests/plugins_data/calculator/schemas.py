"""What the model reads about each tool: when to use it and what to pass."""

CALCULATE = {
    "name": "calculate",
    "description": (
        "Evaluate a math expression exactly and return the number. Knows + - * / // % **, "
        "parentheses, sqrt, sin, cos, tan, log, log2, log10, exp, abs, round, floor, ceil, "
        "factorial, and the constants pi and e. Use it for any arithmetic the user asks for."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "expression": {"type": "string", "description": "e.g. 2**16 or sqrt(2) * pi"},
        },
        "required": ["expression"],
    },
}

UNIT_CONVERT = {
    "name": "unit_convert",
    "description": (
        "Convert a value from one unit to another: length (mm cm m km in ft yd mi), mass "
        "(mg g kg oz lb), temperature (C F K), data (B KB MB GB TB) and time (ms s min h day)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The amount to convert"},
            "from_unit": {"type": "string", "description": "Its unit, e.g. km or F"},
            "to_unit": {"type": "string", "description": "The unit wanted, e.g. mi or C"},
        },
        "required": ["value", "from_unit", "to_unit"],
    },
}
