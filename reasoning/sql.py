"""The engine's hot reads, written once in SQL both backends take, read back with Django's own conversions.

Building a query through the ORM costs 0.2 to 0.7 ms of CPU (SessionControl's status read: 0.72 ms built, 0.02 ms
written by hand, on SQLite); running it costs some tens of microseconds. The reads here run at every step of every
session, on the critical path between model calls, so they are written by hand like the hot writes (ledger.settle,
store.write_columns); everything else stays with the ORM.
"""

import threading
from contextlib import contextmanager

from django.db import connections, router, transaction

_inserted = threading.local()  # per writer thread: the instances sql.insert saved in each open atomic(), innermost last


def connection_for(model):
    return connections[router.db_for_read(model)]


def prep(model, name, value, connection):
    """A value as the column `name` stores it (a UUID is 32 hex digits on SQLite, a uuid on PostgreSQL)."""
    return model._meta.get_field(name).get_db_prep_value(value, connection)


def pk_in(model, pks, connection):
    """`pk IN (...)` for these primary keys, and its parameters."""
    marks = ", ".join(["%s"] * len(pks))
    params = [prep(model, model._meta.pk.name, pk, connection) for pk in pks]
    return f"{connection.ops.quote_name(model._meta.pk.column)} IN ({marks})", params


def columns(model, names, connection):
    """The quoted columns of these fields, for a SELECT list."""
    quote = connection.ops.quote_name
    return ", ".join(quote(model._meta.get_field(name).column) for name in names)


def select(model, names, where, params):
    """Rows of `names` (tuples, each value converted as the ORM would: UUID, bool, aware datetime) matching a
    hand-written WHERE clause on the model's table."""
    connection = connection_for(model)
    quote = connection.ops.quote_name
    sql = f"SELECT {columns(model, names, connection)} FROM {quote(model._meta.db_table)} WHERE {where}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return convert(model, names, rows, connection)


def convert(model, names, rows, connection):
    """What the ORM would have made of these raw rows (its backend's and its fields' converters, in order)."""
    table = model._meta.db_table
    converters = []
    for name in names:
        field = model._meta.get_field(name)
        column = field.get_col(table)
        found = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        converters.append((found, column))
    if not any(found for found, _ in converters):
        return rows
    converted = []
    for row in rows:
        values = list(row)
        for i, (found, column) in enumerate(converters):
            for converter in found:
                values[i] = converter(values[i], column, connection)
        converted.append(tuple(values))
    return converted


def by_pk(model, names, pk):
    """One row's `names` as a dict, by primary key (the model's DoesNotExist if there is none)."""
    connection = connection_for(model)
    where = f"{connection.ops.quote_name(model._meta.pk.column)} = %s"
    rows = select(model, names, where, [prep(model, model._meta.pk.name, pk, connection)])
    if not rows:
        raise model.DoesNotExist(f"{model.__name__} {pk} does not exist")
    return dict(zip(names, rows[0], strict=True))


@contextmanager
def atomic():
    """transaction.atomic, after which the instances sql.insert saved inside it are unsaved again if it rolled back:
    an instance is marked saved only by a write that stands (its writer would otherwise never write it again)."""
    stack = _inserted.__dict__.setdefault("stack", [])
    stack.append([])
    try:
        with transaction.atomic():
            yield
    except BaseException:
        for obj in stack.pop():
            obj._state.adding, obj._state.db = True, None
        raise
    saved = stack.pop()
    if stack:  # an enclosing atomic() can still roll them back
        stack[-1].extend(saved)


def insert(objs):
    """Insert new instances of one model as bulk_create would, in one hand-written statement (Django's build of an
    INSERT was most of a ledger write's CPU). A column the database fills (an auto primary key) is left to it and
    stays unset on the instance; every instance is marked saved (inside atomic(), until a rollback undoes it)."""
    if not objs:
        return
    model = type(objs[0])
    alias = router.db_for_write(model)
    connection = connections[alias]
    quote = connection.ops.quote_name
    fields = [f for f in model._meta.concrete_fields if not getattr(f, "db_returning", False)]
    statement = (
        f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))})"
    )
    params = [[f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields] for obj in objs]
    with connection.cursor() as cursor:
        cursor.executemany(statement, params)
    for obj in objs:
        obj._state.adding, obj._state.db = False, alias
    stack = getattr(_inserted, "stack", None)
    if stack:
        stack[-1].extend(objs)
