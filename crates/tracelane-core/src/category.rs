//! Event categories as Kineto (2021 legacy and modern) and out-of-tree
//! backends write them, and what each means for linking and the op table.

/// The category a backend's device execution windows share with its host
/// driver calls (a PrivateUse1 backend, as the reconstructed TorchNeuron demo
/// writes it — no public TorchNeuron capture attests device events in its
/// trace.json): which one an event is, its lane decides.
pub const PRIVATEUSE1_DRIVER: &str = "privateuse1_driver";

/// The role an event's `cat` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// `cpu_op`, legacy `Operator`: an ATen / framework op.
    CpuOp,
    /// `user_annotation`: `record_function` ranges, `ProfilerStep#N`.
    UserAnnotation,
    /// `python_function`: Python tracer frames.
    PythonFunction,
    /// Host-side runtime/driver API calls that can launch device work:
    /// `cuda_runtime`, `cuda_driver`, `privateuse1_runtime`, `xpu_runtime`,
    /// `mtia_runtime`, legacy `Runtime`, and `privateuse1_driver` on a host lane.
    Runtime,
    /// Kernels on a device (`kernel`, legacy `Kernel`, `mtia_ccp_events`, `hpu_op`).
    Kernel,
    /// `gpu_memcpy`, legacy `Memcpy`.
    Memcpy,
    /// `gpu_memset`, legacy `Memset`.
    Memset,
    /// `cuda_sync` waits recorded on a device stream.
    DeviceSync,
    /// `privateuse1_driver` on a device lane: a PrivateUse1 backend's device
    /// execution window.
    DeviceWindow,
    /// `gpu_user_annotation`: a user annotation mirrored on a device stream.
    DeviceAnnotation,
    /// `overhead`: the profiler's own host-side work (`Activity Buffer
    /// Request`), which PyTorch counts as a CPU event.
    Overhead,
    /// `Trace` spans and anything else that is not counted in the op table.
    Other,
}

impl Category {
    /// Every category, in declaration order.
    pub const ALL: [Category; 12] = [
        Category::CpuOp,
        Category::UserAnnotation,
        Category::PythonFunction,
        Category::Runtime,
        Category::Kernel,
        Category::Memcpy,
        Category::Memset,
        Category::DeviceSync,
        Category::DeviceWindow,
        Category::DeviceAnnotation,
        Category::Overhead,
        Category::Other,
    ];

    /// Classifies a category string. `privateuse1_driver` is returned as
    /// [`Category::Runtime`]; the importer turns it into
    /// [`Category::DeviceWindow`] when it sits on a device lane.
    pub fn from_cat(cat: &str) -> Category {
        match cat {
            "cpu_op" | "Operator" | "operator" => Category::CpuOp,
            "user_annotation" => Category::UserAnnotation,
            "python_function" => Category::PythonFunction,
            "cuda_runtime"
            | "cuda_driver"
            | "privateuse1_runtime"
            | "privateuse1_driver"
            | "xpu_runtime"
            | "xpu_driver"
            | "mtia_runtime"
            | "hip_runtime"
            | "glow_runtime"
            | "Runtime"
            | "runtime"
            | "neuron_rt"
            // rocprofv3's Perfetto output: HIP calls, linked by `corr_id`.
            | "hip_api" => Category::Runtime,
            "kernel" | "Kernel" | "mtia_ccp_events" | "hpu_op" | "xpu_kernel" | "neuron_hw"
            | "neuron_instruction"
            | "kernel_dispatch" => Category::Kernel,
            "gpu_memcpy" | "Memcpy" | "memcpy" | "neuron_dma" | "memory_copy" => Category::Memcpy,
            "gpu_memset" | "Memset" | "memset" => Category::Memset,
            "cuda_sync" => Category::DeviceSync,
            "gpu_user_annotation" => Category::DeviceAnnotation,
            "overhead" | "Overhead" => Category::Overhead,
            _ => Category::Other,
        }
    }

    /// Device work that takes device time: kernels, copies, sets and
    /// execution windows (not syncs, not mirrored annotations).
    pub fn is_device_work(self) -> bool {
        matches!(
            self,
            Category::Kernel | Category::Memcpy | Category::Memset | Category::DeviceWindow
        )
    }

    /// Work (or a wait, or an annotation) that happens on a device lane.
    pub fn is_device(self) -> bool {
        matches!(
            self,
            Category::Kernel
                | Category::Memcpy
                | Category::Memset
                | Category::DeviceSync
                | Category::DeviceWindow
                | Category::DeviceAnnotation
        )
    }

    /// Categories that mark their lane as a device lane on their own.
    pub fn marks_device_lane(self) -> bool {
        matches!(
            self,
            Category::Kernel
                | Category::Memcpy
                | Category::Memset
                | Category::DeviceSync
                | Category::DeviceAnnotation
        )
    }

    /// Host events PyTorch builds its containment tree from (and so rows of
    /// the op table with CPU time). Python tracer frames are not among them:
    /// the profiler removes them from its events and exposes them only as
    /// stacks.
    pub fn is_counted_host(self) -> bool {
        matches!(
            self,
            Category::CpuOp | Category::UserAnnotation | Category::Runtime | Category::Overhead
        )
    }

    /// Events that Kineto records on the CPU by their category (PyTorch
    /// gives them `DeviceType.CPU`), whatever lane they are filed under:
    /// ops, annotations, Python frames, runtime and driver calls, profiler
    /// overhead. `privateuse1_driver` is left open (its lane decides: a
    /// device execution window or a host driver call).
    pub fn host_by_definition(self, cat: &str) -> bool {
        match self {
            Category::CpuOp
            | Category::UserAnnotation
            | Category::PythonFunction
            | Category::Overhead => true,
            Category::Runtime => cat != PRIVATEUSE1_DRIVER,
            _ => false,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Category::CpuOp => "op",
            Category::UserAnnotation => "annotation",
            Category::PythonFunction => "python",
            Category::Runtime => "runtime",
            Category::Kernel => "kernel",
            Category::Memcpy => "memcpy",
            Category::Memset => "memset",
            Category::DeviceSync => "sync",
            Category::DeviceWindow => "device window",
            Category::DeviceAnnotation => "device annotation",
            Category::Overhead => "profiler overhead",
            Category::Other => "other",
        }
    }
}
