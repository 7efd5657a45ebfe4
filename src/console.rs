//! Where the reports go: standard output, unless one of the run's output
//! files *is* standard output (`--events /dev/stdout | ...`, `--vcd
//! /dev/stdout > w.vcd`). Then the report goes to standard error, so that the
//! stream or waveform on standard output is whole and nothing else.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

static TO_STDERR: AtomicBool = AtomicBool::new(false);

/// Whether the reports go to standard error ([`report_to_stderr_if_stdout_among`]).
pub fn to_stderr() -> bool {
    TO_STDERR.load(Ordering::Relaxed)
}

/// Whether `path` names the file standard output is (the same inode: a
/// `/dev/stdout` or `/proc/self/fd/1`, or the file or pipe the shell
/// redirected it to). Never when standard output is a terminal or another
/// character device: every open of `/dev/null` is the same inode, and a
/// report silenced with `> /dev/null` stays silenced whatever else goes there.
pub fn is_stdout(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let out = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata());
        match (out, std::fs::metadata(path)) {
            (Ok(o), Ok(p)) => {
                !o.file_type().is_char_device() && o.dev() == p.dev() && o.ino() == p.ino()
            }
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Send the reports to standard error if one of `outputs` is standard
/// output; returns whether it does.
pub fn report_to_stderr_if_stdout_among<'a>(outputs: impl IntoIterator<Item = &'a Path>) -> bool {
    let yes = outputs.into_iter().any(is_stdout);
    TO_STDERR.store(yes, Ordering::Relaxed);
    yes
}

/// `print!` to where the reports go ([`to_stderr`]).
#[macro_export]
macro_rules! report {
    ($($t:tt)*) => {
        if $crate::console::to_stderr() {
            eprint!($($t)*)
        } else {
            print!($($t)*)
        }
    };
}

/// `println!` to where the reports go ([`to_stderr`]).
#[macro_export]
macro_rules! reportln {
    ($($t:tt)*) => {
        if $crate::console::to_stderr() {
            eprintln!($($t)*)
        } else {
            println!($($t)*)
        }
    };
}

/// `n` and a noun in the number it takes: `count(1, "cycle")` is `1 cycle`,
/// `count(2, "cycle")` is `2 cycles`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn count_takes_the_singular_for_one_only() {
        assert_eq!(super::count(0, "cycle"), "0 cycles");
        assert_eq!(super::count(1, "cycle"), "1 cycle");
        assert_eq!(super::count(2, "instruction"), "2 instructions");
    }

    /// Runs `body` with standard output (file descriptor 1) pointed at `to`,
    /// then points it back. Serialised: file descriptor 1 is the process's.
    #[cfg(unix)]
    fn with_stdout<T>(to: &std::fs::File, body: impl FnOnce() -> T) -> T {
        use std::io::Write as _;
        use std::os::fd::AsRawFd;
        static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        let _ = std::io::stdout().flush();
        // SAFETY: `dup` and `dup2` on descriptors this process holds open;
        // descriptor 1 is restored before returning, panic or not.
        let saved = unsafe { libc::dup(1) };
        assert!(saved >= 0, "dup(1)");
        assert_eq!(unsafe { libc::dup2(to.as_raw_fd(), 1) }, 1, "dup2");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        let _ = std::io::stdout().flush();
        // SAFETY: as above; `saved` is ours and closed once.
        unsafe {
            libc::dup2(saved, 1);
            libc::close(saved);
        }
        r.unwrap_or_else(|p| std::panic::resume_unwind(p))
    }

    /// `is_stdout` holds for the file standard output is and for
    /// `/dev/stdout`, which names it, and not for another file of the same
    /// directory (so the same device), nor for one that does not exist; and
    /// never while standard output is `/dev/null`, not even for `/dev/null`
    /// itself, whose inode every open shares.
    #[cfg(unix)]
    #[test]
    fn a_path_is_standard_output_only_if_it_is_the_same_file_and_not_a_device() {
        use super::is_stdout;
        use std::path::Path;
        let d = crate::fresh_dir("console-is-stdout");
        let (a, b) = (d.join("a"), d.join("b"));
        let fa = std::fs::File::create(&a).unwrap();
        std::fs::File::create(&b).unwrap();
        let seen = with_stdout(&fa, || {
            [
                is_stdout(&a),
                is_stdout(Path::new("/dev/stdout")),
                is_stdout(&b),
                is_stdout(&d.join("none")),
            ]
        });
        assert_eq!(seen, [true, true, false, false], "a, /dev/stdout, b, none");
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        let seen = with_stdout(&null, || {
            [
                is_stdout(Path::new("/dev/null")),
                is_stdout(Path::new("/dev/stdout")),
                is_stdout(&a),
            ]
        });
        assert_eq!(seen, [false, false, false], "/dev/null, /dev/stdout, a");
    }

    /// The reports go to standard error exactly while one of the outputs
    /// last given is standard output, and back to standard output after.
    #[cfg(unix)]
    #[test]
    fn reports_go_to_standard_error_only_while_an_output_is_standard_output() {
        use super::{report_to_stderr_if_stdout_among, to_stderr};
        let d = crate::fresh_dir("console-to-stderr");
        let (a, b) = (d.join("a"), d.join("b"));
        let fa = std::fs::File::create(&a).unwrap();
        std::fs::File::create(&b).unwrap();
        let seen = with_stdout(&fa, || {
            let mut seen = Vec::new();
            for outputs in [&[&b][..], &[&b, &a], &[]] {
                let yes = report_to_stderr_if_stdout_among(outputs.iter().map(|p| p.as_path()));
                seen.push((yes, to_stderr()));
            }
            seen
        });
        assert_eq!(seen, [(false, false), (true, true), (false, false)]);
    }
}
