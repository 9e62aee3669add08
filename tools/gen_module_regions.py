"""Records the automatic-regions fixture: a small model trained for six
profiler steps on CPU with Python stacks and module hierarchy
(with_stack=True, which records nn.Module events), a record_function label, and a gloo
all-reduce of the gradients (world size 1) between forward and optimizer.

Writes tests/fixtures/torch-regions/module_steps_cpu.pt.trace.json.gz and,
beside it, module_steps_cpu.expected.json: what the model's structure says
the regions must be (independent of the trace): per step one forward of the
top module, two Block modules, four Linear layers, one all-reduce per
parameter tensor; six ProfilerStep#N; one "optimizer" record_function per
step.

Run: python tools/gen_module_regions.py  (PyTorch 2.15, CPU)
"""
import gzip
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function, schedule

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "torch-regions")


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = torch.nn.Linear(d, 2 * d)
        self.down = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Net(torch.nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(d), Block(d)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def main():
    torch.manual_seed(0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=0, world_size=1)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    steps = 6
    sched = schedule(wait=0, warmup=0, active=steps, repeat=1)
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "trace.json")
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, record_shapes=True,
                 with_stack=True) as prof:
        for _ in range(steps):
            loss = net(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            for p in net.parameters():
                dist.all_reduce(p.grad)
            with record_function("optimizer"):
                opt.step()
            prof.step()
    prof.export_chrome_trace(path)
    os.makedirs(OUT, exist_ok=True)
    with open(path, "rb") as f, gzip.open(os.path.join(OUT, "module_steps_cpu.pt.trace.json.gz"), "wb", 9) as g:
        shutil.copyfileobj(f, g)
    params = len(list(net.parameters()))
    expected = {
        "steps": steps,
        "per_step": {"Net": 1, "Block": 2, "Linear": 4, "all_reduce": params, "optimizer": 1},
        "made_by": "tools/gen_module_regions.py",
        "torch": torch.__version__,
    }
    with open(os.path.join(OUT, "module_steps_cpu.expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
