//! Python bindings: the private `flashlife._core` module. The public API lives in the
//! Python package (`python/flashlife`); this module only moves strings and numbers across.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use flashlife::config::presets;
use flashlife::run_dir::DirOptions;
use flashlife::sim::{Control, Progress, ProgressSink};
use flashlife::{Config, ConfigBuilder};

// The dotted module path makes the exception picklable (multiprocessing, Dask).
create_exception!(
    flashlife._core,
    FlashlifeError,
    PyException,
    "A configuration, trace or run error from the flashlife core."
);

fn err(e: flashlife::Error) -> PyErr {
    FlashlifeError::new_err(e.to_string())
}

/// Resolve layers into a configuration: optional preset, optional TOML files (in order),
/// optional inline TOML text, then `key=value` overrides.
fn build_config(
    preset: Option<&str>,
    files: &[String],
    toml_text: Option<&str>,
    overrides: &[String],
) -> flashlife::Result<Config> {
    let mut b = ConfigBuilder::new();
    if let Some(p) = preset {
        b = b.preset(p)?;
    }
    for f in files {
        b = b.file(f)?;
    }
    if let Some(t) = toml_text {
        b = b.toml_str(t, "<config>")?;
    }
    for o in overrides {
        b = b.set(o)?;
    }
    b.build()
}

/// The fully resolved configuration as TOML text.
#[pyfunction]
#[pyo3(signature = (preset=None, files=Vec::new(), toml_text=None, overrides=Vec::new()))]
fn resolve_config(
    preset: Option<&str>,
    files: Vec<String>,
    toml_text: Option<&str>,
    overrides: Vec<String>,
) -> PyResult<String> {
    build_config(preset, &files, toml_text, &overrides).map(|c| c.to_toml()).map_err(err)
}

/// `(name, description)` of every preset.
#[pyfunction]
fn list_presets() -> Vec<(String, String)> {
    presets::ALL.iter().map(|p| (p.name.to_string(), p.description().to_string())).collect()
}

/// Run a configuration. Returns a dict with `summary_json`, `summary_text`,
/// `timeseries_csv`, `erase_histogram` (list of (erase count, blocks)), `latency_cdf_csv` and
/// `config_toml`. With `out_dir`, the run's files are written there too, and the run
/// checkpoints there when interrupted and every `run.checkpoint_every`; a folder holding
/// another run's results or checkpoint is refused unless `overwrite`. The GIL is released
/// while the core runs; Ctrl-C (or any signal whose Python handler raises) stops the run,
/// checkpointing it when it has an `out_dir`, and the handler's exception propagates. `stop`,
/// an object with `is_set()` (a `threading.Event`), stops the run the same way when it is set
/// (raising KeyboardInterrupt): signals reach only the main thread, and this reaches a run in
/// any thread, preconditioning included.
#[pyfunction]
#[pyo3(signature = (preset=None, files=Vec::new(), toml_text=None, overrides=Vec::new(), out_dir=None, overwrite=false, progress=None, stop=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    preset: Option<&str>,
    files: Vec<String>,
    toml_text: Option<&str>,
    overrides: Vec<String>,
    out_dir: Option<String>,
    overwrite: bool,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = build_config(preset, &files, toml_text, &overrides).map_err(err)?;
    run_in_background(py, progress, stop, move |control| match &out_dir {
        Some(d) => flashlife::run_to_dir(cfg, std::path::Path::new(d), DirOptions { overwrite }, control),
        None => flashlife::Simulator::new_cancellable(cfg, control.cancel.clone()).and_then(|mut s| {
            s.set_control(control);
            s.run()
        }),
    })
}

/// Go on with the interrupted run whose checkpoint is in `out_dir`; returns what `run` does.
#[pyfunction]
#[pyo3(signature = (out_dir, progress=None, stop=None))]
fn resume<'py>(
    py: Python<'py>,
    out_dir: String,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    run_in_background(py, progress, stop, move |control| flashlife::resume_dir(std::path::Path::new(&out_dir), control))
}

/// Run `job` on a Rust thread and wait for it without the GIL, waking every 100 ms to let
/// Python handle signals and, with a `progress` callable, to call it with
/// `(fraction, requests, label)` when the run has moved on. A signal handler's (or the
/// progress callable's) exception, or `stop.is_set()` turning true, sets the job's cancel
/// flag, waits for the job to stop (and checkpoint) and is raised.
fn run_in_background<'py, F>(
    py: Python<'py>,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
    job: F,
) -> PyResult<Bound<'py, PyDict>>
where
    F: FnOnce(Control) -> flashlife::Result<flashlife::RunOutput> + Send + 'static,
{
    let cancel = Arc::new(AtomicBool::new(false));
    // The core reports from its thread; Python hears the latest report on its own thread.
    let latest: Arc<Mutex<Option<Progress>>> = Arc::new(Mutex::new(None));
    let sink: Option<ProgressSink> = progress.as_ref().map(|_| {
        let latest = latest.clone();
        Box::new(move |p: Progress| {
            if let Ok(mut slot) = latest.lock() {
                *slot = Some(p);
            }
        }) as ProgressSink
    });
    let (tx, rx) = mpsc::channel();
    let control = Control { cancel: Some(cancel.clone()), progress: sink };
    let worker = std::thread::spawn(move || {
        let _ = tx.send(job(control));
    });
    let mut rx = rx;
    let result = loop {
        // The receiver is moved into the GIL-free closure and back (it is Send, not Sync).
        let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(100)), rx));
        rx = back;
        match got {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let report = latest.lock().ok().and_then(|mut slot| slot.take());
                let told = match (&progress, report) {
                    (Some(callback), Some(p)) => callback.call1(py, (p.fraction, p.requests, p.label)).map(|_| ()),
                    _ => Ok(()),
                };
                let asked = |py: Python<'py>| -> PyResult<()> {
                    match &stop {
                        Some(s) if s.call_method0(py, "is_set")?.is_truthy(py)? => {
                            Err(PyKeyboardInterrupt::new_err("stopped: the run's stop event was set"))
                        }
                        _ => Ok(()),
                    }
                };
                if let Err(e) = told.and_then(|_| py.check_signals()).and_then(|_| asked(py)) {
                    cancel.store(true, Ordering::Relaxed);
                    let stopped = py.detach(move || rx.recv());
                    let _ = py.detach(move || worker.join());
                    // A run that could not write its checkpoint says so rather than vanish;
                    // one stopped before there was anything to keep raises the signal's own
                    // exception (KeyboardInterrupt), as any other interrupted run does.
                    match stopped {
                        Ok(Err(flashlife::Error::Interrupted(_))) => return Err(e),
                        Ok(Err(run_error)) => return Err(err(run_error)),
                        _ => return Err(e),
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(FlashlifeError::new_err("the simulation thread stopped unexpectedly"));
            }
        }
    };
    let _ = worker.join();
    let out = result.map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("summary_json", out.summary.to_json())?;
    d.set_item("summary_text", out.summary.to_text())?;
    d.set_item("timeseries_csv", out.timeseries.to_csv())?;
    d.set_item("erase_histogram", out.erase_histogram)?;
    d.set_item("latency_cdf_csv", out.latency_cdf.to_csv())?;
    d.set_item("config_toml", out.config.to_toml())?;
    Ok(d)
}

/// Statistics of a trace file: `(json, text)`. The trace options come from the resolved
/// configuration's `workload.trace` section (so `overrides` such as
/// `workload.trace.time_unit="ms"` apply); `format` overrides the format.
#[pyfunction]
#[pyo3(signature = (path, format=None, overrides=Vec::new()))]
fn trace_stats(
    py: Python<'_>,
    path: String,
    format: Option<String>,
    overrides: Vec<String>,
) -> PyResult<(String, String)> {
    let cfg = build_config(None, &[], None, &overrides).map_err(err)?;
    let mut tc = cfg.workload.trace.clone();
    if let Some(f) = format {
        tc.format = f;
    }
    let stats = py.detach(move || flashlife::workload::trace_stats(&path, &tc)).map_err(err)?;
    let json = serde_json::to_string_pretty(&stats).map_err(|e| FlashlifeError::new_err(e.to_string()))?;
    Ok((json, stats.to_text()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FlashlifeError", m.py().get_type::<FlashlifeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The commit the core was built from (None from a source distribution without one).
    m.add("__build_commit__", flashlife::stats::provenance::build_commit())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resume, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(list_presets, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    Ok(())
}
