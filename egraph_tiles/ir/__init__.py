"""The tile IR: types, expressions, statements, programs and the op registry."""

from .exprs import (BinOp, Call, Compare, Const, Expr, ListExpr, Neg, StrConst, Symbol, Var,
                    VarRef, as_expr, const_int, free_vars, substitute)
from .ops import REGISTRY, Family, OpDef, OpTypeError, bind, infer_type, lookup
from .stmts import (AssignStmt, EvalStmt, ForStmt, Function, FunctionType, IfStmt, LoopKind,
                    Param, Program, ReturnStmt, ScopeStmt, Span, Stmt, WhileStmt, YieldStmt,
                    child_bodies, defined_vars, walk)
from .types import (MEMREF_PLANNING_SENTINEL, DType, MemorySpace, MemRef, ScalarType,
                    TensorType, TileType, TupleType, Type, UnknownType)

__all__ = [
    "AssignStmt", "BinOp", "Call", "Compare", "Const", "DType", "EvalStmt", "Expr", "Family",
    "ForStmt", "Function", "FunctionType", "IfStmt", "ListExpr", "LoopKind",
    "MEMREF_PLANNING_SENTINEL", "MemRef", "MemorySpace", "Neg", "OpDef", "OpTypeError", "Param",
    "Program", "REGISTRY", "ReturnStmt", "ScalarType", "ScopeStmt", "Span", "Stmt", "StrConst",
    "Symbol", "TensorType", "TileType", "TupleType", "Type", "UnknownType", "Var", "VarRef",
    "WhileStmt", "YieldStmt", "as_expr", "bind", "child_bodies", "const_int", "defined_vars",
    "free_vars", "infer_type", "lookup", "substitute", "walk",
]
