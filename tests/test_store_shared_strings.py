"""Reading a run into pandas with shared string objects and dictionary-encoded columns changes no value or type."""

import numpy as np
import pandas as pd
import pyarrow as pa

from normbench.results.store import _same_types, to_frame


def _plain_frame(table):
    """What to_frame returned before strings were shared: pyarrow's own conversion, column by column."""
    mapping = {
        pa.int64(): pd.Int64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
        pa.string(): pd.StringDtype("python", na_value=np.nan),
    }
    return table.to_pandas(types_mapper=mapping.get, ignore_metadata=True)


def _table():
    strings = pa.chunked_array([["a", None, "b"], [], ["b", "a", None, "c"]], pa.string())
    ints = pa.chunked_array([[1, None, 3], [], [4, 5, None, 7]], pa.int64())
    return pa.table({"s": strings, "i": ints, "t": strings})


def test_shared_strings_equal_pyarrows_conversion():
    table = _table()
    got = to_frame(table)
    pd.testing.assert_frame_equal(got, _plain_frame(table), check_exact=True)
    assert list(got.columns) == ["s", "i", "t"]
    assert got["s"].iloc[0] is got["s"].iloc[4]  # one object per distinct value


def test_dictionary_encoded_column_reads_as_its_strings():
    table = _table()
    encoded = table.set_column(0, "s", pa.chunked_array([c.dictionary_encode() for c in table["s"].chunks]))
    assert pa.types.is_dictionary(encoded.schema.field("s").type)
    pd.testing.assert_frame_equal(to_frame(encoded), _plain_frame(table), check_exact=True)


def test_empty_and_all_null_columns():
    table = pa.table({"s": pa.chunked_array([], pa.string()), "d": pa.chunked_array([], pa.int64())})
    pd.testing.assert_frame_equal(to_frame(table), _plain_frame(table))
    nulls = pa.table({"s": pa.nulls(3, pa.string())})
    pd.testing.assert_frame_equal(to_frame(nulls), _plain_frame(nulls))


def test_same_types_decodes_a_column_another_table_holds_plain():
    plain = pa.table({"p": ["x", "y"]})
    encoded = pa.table({"p": pa.array(["z", None]).dictionary_encode()})
    both = _same_types([encoded, plain])
    assert [t.schema.field("p").type for t in both] == [pa.string(), pa.string()]
    assert pa.concat_tables(both)["p"].to_pylist() == ["z", None, "x", "y"]
    alone = _same_types([encoded, encoded])  # all encoded alike: left as they are
    assert pa.types.is_dictionary(alone[0].schema.field("p").type)
