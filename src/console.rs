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
}
