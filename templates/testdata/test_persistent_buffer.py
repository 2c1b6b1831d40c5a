"""Tests of persistent_buffer against the fake torch beside this file.

Run as: python3 test_persistent_buffer.py HELPER_MODULE_PATH
The module under test is loaded from the path given, so the same tests run on
templates/persistent_buffer.py and on the inline form the fixer inserts.
"""

import importlib.util
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_torch  # noqa: E402

sys.modules["torch"] = fake_torch
torch = fake_torch

HELPER = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "persistent_buffer.py")


def load():
    spec = importlib.util.spec_from_file_location("helper_under_test", HELPER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class PersistentBufferTest(unittest.TestCase):
    def setUp(self):
        self.mod = load()
        self.pb = self.mod.persistent_buffer
        torch.cuda.capturing = False

    def test_converts_and_shapes_like_source(self):
        src = torch.tensor([1, 2, (1 << 33) + 5, -1], dtype=torch.int64, device="cuda").view((2, 2))
        out = self.pb("r.sl", src, torch.int32)
        self.assertEqual(out.shape, (2, 2))
        self.assertEqual(out.dtype, torch.int32)
        self.assertEqual(out.device, torch.device("cuda"))
        self.assertEqual(out.tolist(), [1, 2, 5, -1])

    def test_same_storage_across_calls(self):
        a = self.pb("r.sl", torch.tensor([1, 2, 3], device="cuda"), torch.int32)
        b = self.pb("r.sl", torch.tensor([7, 8], device="cuda"), torch.int32)
        self.assertEqual(a.data_ptr(), b.data_ptr())
        self.assertEqual(b.tolist(), [7, 8])
        self.assertEqual(a.tolist(), [7, 8, 3])  # the prefix was overwritten in place

    def test_dtype_defaults_to_source(self):
        src = torch.tensor([4, 5], dtype=torch.int64, device="cuda")
        out = self.pb("r.q", src)
        self.assertIs(out.dtype, torch.int64)
        self.assertNotEqual(out.data_ptr(), src.data_ptr())

    def test_keyed_by_site_dtype_device(self):
        src = torch.tensor([1], device="cuda")
        ptrs = {
            self.pb("a", src, torch.int32).data_ptr(),
            self.pb("b", src, torch.int32).data_ptr(),
            self.pb("a", src, torch.int64).data_ptr(),
            self.pb("a", torch.tensor([1], device="cuda:1"), torch.int32).data_ptr(),
        }
        self.assertEqual(len(ptrs), 4)
        self.assertEqual(self.pb("a", src, torch.int32).data_ptr(), self.pb("a", src, torch.int32).data_ptr())

    def test_growth_outside_capture_keeps_old_storage(self):
        small = self.pb("r.pt", torch.tensor([1], device="cuda"), torch.int32)
        big = self.pb("r.pt", torch.tensor([1, 2, 3, 4], device="cuda"), torch.int32)
        self.assertNotEqual(small.data_ptr(), big.data_ptr())
        self.assertTrue(any(b.data_ptr() == small.data_ptr() for b in self.mod._retired_buffers))
        again = self.pb("r.pt", torch.tensor([9], device="cuda"), torch.int32)
        self.assertEqual(again.data_ptr(), big.data_ptr())

    def test_growth_under_capture_raises(self):
        self.pb("reader.seq_lens_i32", torch.tensor([1, 2], device="cuda"), torch.int32)
        torch.cuda.capturing = True
        ok = self.pb("reader.seq_lens_i32", torch.tensor([3], device="cuda"), torch.int32)  # fits: no error
        self.assertEqual(ok.tolist(), [3])
        with self.assertRaises(RuntimeError) as cm:
            self.pb("reader.seq_lens_i32", torch.tensor([1, 2, 3], device="cuda"), torch.int32)
        msg = str(cm.exception)
        self.assertIn("'reader.seq_lens_i32'", msg)
        self.assertIn("warm up at the largest batch size before capture", msg)

    def test_first_use_under_capture_raises(self):
        torch.cuda.capturing = True
        with self.assertRaises(RuntimeError):
            self.pb("never.warmed", torch.tensor([1], device="cuda"), torch.int32)

    def test_cpu_tensors_never_ask_about_capture(self):
        torch.cuda.capturing = True  # a CPU copy is not part of any graph
        out = self.pb("cpu.site", torch.tensor([1, 2]), torch.int32)
        self.assertEqual(out.tolist(), [1, 2])

    def test_capture_passes_through_what_needs_no_copy(self):
        src = torch.tensor([4, 5], dtype=torch.int64, device="cuda")
        self.pb("r.q", src)  # warm-up: allocates the buffers
        self.pb("r.q", src, torch.int32)
        torch.cuda.capturing = True
        self.assertIs(self.pb("r.q", src), src)  # as src.contiguous() is src
        self.assertIs(self.pb("r.q", src, torch.int64), src)
        # a conversion, a clone, a non-contiguous source still copy
        self.assertIsNot(self.pb("r.q", src, torch.int32), src)
        self.assertNotEqual(self.pb("r.q", src, copy=True).data_ptr(), src.data_ptr())
        view = torch.tensor([1, 2], dtype=torch.int64, device="cuda")
        view.contiguous = False
        self.assertNotEqual(self.pb("r.q", view).data_ptr(), view.data_ptr())
        # not capturing: always the persistent buffer (replay-prep keeps its address)
        torch.cuda.capturing = False
        self.assertNotEqual(self.pb("r.q", src).data_ptr(), src.data_ptr())

    def test_cpu_source_under_capture_copies(self):
        torch.cuda.capturing = True
        src = torch.tensor([1, 2])
        self.assertIsNot(self.pb("cpu.q", src), src)

    def test_empty_source(self):
        out = self.pb("r.empty", torch.tensor([], device="cuda"), torch.int32)
        self.assertEqual(out.numel(), 0)


if __name__ == "__main__":
    unittest.main()
