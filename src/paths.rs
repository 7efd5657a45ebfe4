//! Checks on the files and directories a command is about to write, made
//! before any work: an output that is the command's own input, and a
//! directory path that runs through a file, are refused with a message naming
//! the paths (instead of a destroyed input, or `File exists (os error 17)`
//! after minutes of work).

use std::path::Path;

use anyhow::{bail, Context, Result};

/// Whether `a` and `b` name the same existing file (the same inode on Unix,
/// so hard links and symbolic links count; elsewhere the same canonical path).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

/// `FILE` -> `FILE.part`: where an output is written until it is complete
/// (then moved to `FILE`), so that a failed or killed run leaves no
/// complete-looking `FILE`. `FILE` itself ([`resolve`]) when it is written
/// directly: a named pipe, a device, or any path through `/dev` (but
/// `/dev/shm`) or `/proc` (`/dev/stdout` whatever the shell connected to it); a rename would replace
/// it, and its reader waits on it. A `FILE` that is a symbolic link is written
/// beside the file the link resolves to, and that file is replaced (the link
/// is kept); a dangling link's file is made, as the shell's `>` makes it (so
/// that the file written is the same before and after another output of the
/// run makes it).
pub fn part_path(path: &Path) -> std::path::PathBuf {
    resolve(path).map_or_else(|| path.to_path_buf(), |t| with_part(&t))
}

/// Whether `path` is written directly, not through `FILE.part` ([`part_path`]):
/// a named pipe, a device, a socket, or a path through `/dev` (but
/// `/dev/shm`) or `/proc`.
pub fn written_directly(path: &Path) -> bool {
    resolve(path).is_none()
}

/// `t` with `.part` after its file name.
fn with_part(t: &Path) -> std::path::PathBuf {
    let mut name = t.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    t.with_file_name(name)
}

/// Where an output `path` ends up: `None` if it is written directly (a
/// named pipe, a device or a socket, or a path that is or links into `/dev`
/// or `/proc`); else the file its links resolve to, one link at a time (the
/// missing file a dangling link names), or `path` itself when links loop.
fn resolve(path: &Path) -> Option<std::path::PathBuf> {
    // under /dev only /dev/shm (a tmpfs) holds ordinary files
    let special = |p: &Path| {
        std::path::absolute(p).is_ok_and(|a| {
            (a.starts_with("/dev") && !a.starts_with("/dev/shm")) || a.starts_with("/proc")
        })
    };
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if special(&p) {
            return None;
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => match std::fs::read_link(&p) {
                Ok(t) => p = p.parent().unwrap_or(Path::new("")).join(t),
                Err(_) => break,
            },
            Ok(m) if !m.is_file() && !m.is_dir() => return None,
            Ok(_) => return Some(p),
            // missing: a new file, or the file a dangling link names
            Err(_) => return Some(p),
        }
    }
    Some(path.to_path_buf())
}

/// Write `contents` to `path` through `path.part` ([`part_path`],
/// [`move_into_place`]), so that a failed or interrupted write never leaves a
/// cut-off `path`; the error names the file.
pub fn write_whole(path: &Path, contents: &[u8]) -> Result<()> {
    let part = part_path(path);
    if let Err(e) = std::fs::write(&part, contents) {
        remove_part(path);
        bail!("writing {}: {e}", path.display());
    }
    move_into_place(path, "writing")
}

/// Remove the unfinished `path.part` of a failed output, if there is one
/// (never a `path` written directly, [`part_path`]).
pub fn remove_part(path: &Path) {
    if let Some(t) = resolve(path) {
        let _ = std::fs::remove_file(with_part(&t));
    }
}

/// Move the finished `path.part` ([`part_path`]) to `path`, or to the file
/// `path` links to (nothing to do for a `path` written directly); the error
/// names both and the output (`what`).
pub fn move_into_place(path: &Path, what: &str) -> Result<()> {
    let Some(to) = resolve(path) else {
        return Ok(());
    };
    let part = with_part(&to);
    std::fs::rename(&part, to).with_context(|| {
        format!(
            "{what}: moving the finished {} to {}",
            part.display(),
            path.display()
        )
    })
}

/// Where `path` will be written, as an absolute path, once the directories
/// it names are made: its longest leading part that exists made canonical
/// (links followed), the rest as written, `.` dropped and `..` one level up
/// (a directory still to be made is a plain directory, so `new/../f` is `f`
/// whether or not `new` exists yet), and a link at the end followed
/// ([`resolve`]). Comparing outputs by this, not by the files that exist
/// before the run, catches `new/../input` and a dangling link to another
/// output.
pub fn where_written(path: &Path) -> std::path::PathBuf {
    fn settled(p: &Path) -> std::path::PathBuf {
        use std::path::Component;
        let a = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let parts: Vec<Component> = a.components().collect();
        for k in (1..=parts.len()).rev() {
            let head: std::path::PathBuf = parts[..k].iter().collect();
            if let Ok(mut at) = std::fs::canonicalize(&head) {
                for c in &parts[k..] {
                    match c {
                        Component::ParentDir => {
                            at.pop();
                        }
                        Component::CurDir => {}
                        c => at.push(c),
                    }
                }
                return at;
            }
        }
        a
    }
    let p = settled(path);
    match resolve(&p) {
        Some(t) if t != p => settled(&t),
        _ => p,
    }
}

/// [`where_written`] of `path` and of the `.part` it is written through
/// first, if any ([`part_path`]).
fn written_at(path: &Path) -> Vec<std::path::PathBuf> {
    let w = where_written(path);
    if written_directly(&w) {
        vec![w]
    } else {
        let part = with_part(&w);
        vec![w, part]
    }
}

/// The largest report file `--check-only` reads (`stacks.json` of a
/// `make paper` run is about 160 KB: this is some thousands of studies), so
/// that a file that is a device (`/dev/zero`) is refused instead of read
/// until memory runs out.
pub const MAX_REPORT_BYTES: u64 = 256 << 20;

/// The text of the file `path`, of at most `max` bytes
/// ([`sim::config::read_text_capped`]); the error names the file and says
/// which limit it passed.
pub fn read_text_capped(path: &Path, max: u64) -> Result<String> {
    sim::config::read_text_capped(path, max, ", more than any report this tool writes")
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))
}

/// Fails if the output `out` (described as `what`, e.g. `--vcd`), or the
/// `out.part` it is written to first ([`part_path`]), is the input file
/// `input`: writing it would destroy the input before it is read. The
/// output is taken where it will be written ([`where_written`]), so a path
/// through a directory still to be made (`new/../input`) is caught too.
pub fn refuse_overwrite(input: &Path, out: &Path, what: &str) -> Result<()> {
    for (k, o) in written_at(out).iter().enumerate() {
        if same_file(input, o) {
            // name the output as given, and where it lands when that is
            // not plain from the name (a `..`, a link, the `.part`)
            let at = if k == 1 {
                format!(" (written first to {})", o.display())
            } else if std::path::absolute(out).is_ok_and(|a| a == *o) {
                String::new()
            } else {
                format!(" (written at {})", o.display())
            };
            bail!(
                "{what} {}{at} would overwrite the input file {}: refusing",
                out.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Checks on an output file `out` (described as `what`) before any work: it
/// is not a directory, and its directory can be made.
pub fn output_file(out: &Path, what: &str) -> Result<()> {
    if out.is_dir() {
        bail!("{what} {}: is a directory", out.display());
    }
    // `-` is standard output to many tools; here it would be a file named `-`
    if out.as_os_str() == "-" {
        bail!("{what} -: for standard output give /dev/stdout (`-` would be a file of that name)");
    }
    // `newdir/` names a directory even while it does not exist (a file
    // could not be moved there at the end)
    if ends_in_separator(out) {
        bail!(
            "{what} {}: names a directory (it ends in `/`, `.` or `..`); give a file name",
            out.display()
        );
    }
    create_parent(out, what)
}

/// Whether `path` as written names a directory whatever exists: it ends in a
/// path separator (`dir/`), or its last part is `.` or `..` (which `Path`
/// would otherwise drop or keep as a file name).
fn ends_in_separator(path: &Path) -> bool {
    let b = path.as_os_str().as_encoded_bytes();
    let last = b
        .rsplit(|&c| std::path::is_separator(char::from(c)))
        .next()
        .unwrap_or_default();
    last.is_empty() || last == b"." || last == b".."
}

/// Fails if two outputs of one run name the same file (they would be written
/// over each other): `outs` are (option, path) pairs, compared where they
/// will be written ([`where_written`]: links followed, dangling ones too,
/// and directories still to be made taken as made), their `.part` files
/// included, and as files (hard links).
pub fn distinct_outputs(outs: &[(&str, std::path::PathBuf)]) -> Result<()> {
    for (i, (wa, a)) in outs.iter().enumerate() {
        for (wb, b) in &outs[i + 1..] {
            let (a1, b1) = (written_at(a), written_at(b));
            if a1.iter().any(|x| b1.contains(x)) || same_file(&a1[0], &b1[0]) {
                bail!(
                    "{wa} {} and {wb} {} name the same file: give each its own",
                    a.display(),
                    b.display()
                );
            }
        }
    }
    Ok(())
}

/// Create directory `dir` and its parents. If the path runs through something
/// that is not a directory, the error names it (`create_dir_all` would only
/// say `File exists`).
pub fn create_dir(dir: &Path, what: &str) -> Result<()> {
    for a in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        if let Ok(m) = std::fs::metadata(a) {
            if !m.is_dir() {
                if a == dir {
                    bail!("{what} {}: exists and is not a directory", dir.display());
                }
                bail!(
                    "{what} {}: {} is not a directory",
                    dir.display(),
                    a.display()
                );
            }
            break; // the nearest existing ancestor is a directory
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{what}: creating {}", dir.display()))
}

/// The directories [`create_dir_undoable`] made, deepest first, so that a
/// command that fails before writing anything leaves no empty directory behind.
#[must_use]
pub struct MadeDirs(Vec<std::path::PathBuf>);

impl MadeDirs {
    /// Remove the directories made, those still empty only (a file written
    /// meanwhile, by this run or another, keeps its directory).
    pub fn undo(self) {
        for d in &self.0 {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
        }
    }
}

/// [`create_dir`], remembering which directories did not exist before.
pub fn create_dir_undoable(dir: &Path, what: &str) -> Result<MadeDirs> {
    let missing: Vec<_> = dir
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        // `a/..` names another directory than the one made (`a/../b` makes
        // `a` and `b`)
        .filter(|a| {
            !matches!(
                a.components().next_back(),
                Some(std::path::Component::ParentDir | std::path::Component::CurDir)
            )
        })
        .map(Path::to_path_buf)
        .collect();
    create_dir(dir, what)?;
    Ok(MadeDirs(missing))
}

/// Runs `study`, a study command's work, into its output directory `out`
/// (`--out`): each of its `files` is first refused if it would overwrite
/// the configuration file (`machine`), the directory is made (and removed
/// again, while empty, if anything after fails), each file is checked to
/// be writable there, and only then does `study` run: a bad `--out` is
/// found before minutes of runs, and a failed study leaves no empty
/// directory behind.
pub fn into_out_dir(
    out: &Path,
    files: &[&str],
    machine: &crate::run::MachineArgs,
    study: impl FnOnce() -> Result<()>,
) -> Result<()> {
    for f in files {
        machine.refuse_overwrite(&out.join(f), "--out")?;
    }
    let made = create_dir_undoable(out, "--out")?;
    let r = files
        .iter()
        .try_for_each(|f| output_file(&out.join(f), "--out"))
        .and_then(|()| study());
    if r.is_err() {
        made.undo();
    }
    r
}

/// [`create_dir`] for the directory a file `path` will be written in.
pub fn create_parent(path: &Path, what: &str) -> Result<()> {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => create_dir(d, what),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;

    fn tmp(name: &str) -> crate::TestDir {
        crate::fresh_dir(&format!("paths-{name}"))
    }

    /// A regular (or missing) output goes through `FILE.part`; a named pipe
    /// is written directly, and neither moving into place nor removing the
    /// part touches it; a symbolic link keeps pointing at its file, which is
    /// replaced.
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_directly() {
        let d = tmp("fifo");
        let plain = d.join("a.bin");
        assert_eq!(part_path(&plain), d.join("a.bin.part"));
        std::fs::write(&plain, b"x").unwrap();
        assert_eq!(part_path(&plain), d.join("a.bin.part"));
        let fifo = d.join("p.bin");
        let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates it.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        assert_eq!(part_path(&fifo), fifo);
        move_into_place(&fifo, "-o").unwrap();
        remove_part(&fifo);
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());
        // a failed regular output's part is removed, the earlier file kept
        std::fs::write(part_path(&plain), b"partial").unwrap();
        remove_part(&plain);
        assert!(!part_path(&plain).exists());
        assert_eq!(std::fs::read(&plain).unwrap(), b"x");
        // a link to a regular file: the part goes beside the file, which is
        // replaced, and the link stays a link
        let link = d.join("sub").join("link.bin");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&plain, &link).unwrap();
        let canon = std::fs::canonicalize(&plain).unwrap();
        assert_eq!(part_path(&link), canon.with_file_name("a.bin.part"));
        std::fs::write(part_path(&link), b"new").unwrap();
        move_into_place(&link, "--vcd").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&plain).unwrap(), b"new");
        assert!(!canon.with_file_name("a.bin.part").exists());
        // a dangling link: the file it names is made, and the link kept
        let dangling = d.join("dangling.bin");
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        assert_eq!(part_path(&dangling), d.join("nowhere.part"));
        std::fs::write(part_path(&dangling), b"made").unwrap();
        move_into_place(&dangling, "--vcd").unwrap();
        assert_eq!(std::fs::read(&dangling).unwrap(), b"made");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!d.join("nowhere.part").exists());
    }

    #[test]
    fn a_capped_read_takes_the_limit_and_refuses_one_byte_more() {
        let d = tmp("capped");
        let f = d.join("r.json");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read_text_capped(&f, 5).unwrap(), "12345");
        let e = read_text_capped(&f, 4).unwrap_err().to_string();
        assert!(e.contains("r.json: larger than 4 bytes"), "{e}");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        let e = format!("{:#}", read_text_capped(&f, 5).unwrap_err());
        assert!(e.contains("r.json: not UTF-8"), "{e}");
        let e = format!("{:#}", read_text_capped(&d.join("none"), 5).unwrap_err());
        assert!(e.contains("reading ") && e.contains("none"), "{e}");
        #[cfg(unix)]
        {
            let e = read_text_capped(Path::new("/dev/zero"), 1 << 16).unwrap_err();
            assert!(e.to_string().contains("larger than 65536 bytes"), "{e}");
        }
    }

    #[test]
    fn same_file_sees_links_and_other_names() {
        let d = tmp("same");
        let f = d.join("a.bin");
        std::fs::write(&f, b"x").unwrap();
        assert!(same_file(&f, &d.join(".").join("a.bin")));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&f, d.join("l.bin")).unwrap();
            std::fs::hard_link(&f, d.join("h.bin")).unwrap();
            assert!(same_file(&f, &d.join("l.bin")));
            assert!(same_file(&f, &d.join("h.bin")));
        }
        std::fs::write(d.join("b.bin"), b"x").unwrap();
        assert!(!same_file(&f, &d.join("b.bin")));
        assert!(!same_file(&f, &d.join("missing.bin")));
        let e = refuse_overwrite(&f, &d.join("./a.bin"), "--vcd").unwrap_err();
        assert!(
            e.to_string().contains("would overwrite the input file"),
            "{e}"
        );
        // nor the `.part` it is written to first
        let e = refuse_overwrite(&d.join("a.bin"), &d.join("a"), "--vcd").err();
        std::fs::rename(&f, d.join("a.part")).unwrap();
        assert!(e.is_none());
        let e = refuse_overwrite(&d.join("a.part"), &d.join("a"), "--vcd").unwrap_err();
        assert!(e.to_string().contains("a.part) would overwrite"), "{e}");
        std::fs::rename(d.join("a.part"), &f).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"x");
    }

    #[test]
    fn made_dirs_are_undone_while_empty_and_kept_otherwise() {
        let d = tmp("undo");
        // made three levels, undone: the existing parent stays
        let made = create_dir_undoable(&d.join("a/b/c"), "--out").unwrap();
        assert!(d.join("a/b/c").is_dir());
        made.undo();
        assert!(!d.join("a").exists());
        assert!(d.is_dir());
        // a directory that existed is never removed, even empty
        std::fs::create_dir_all(d.join("x")).unwrap();
        create_dir_undoable(&d.join("x"), "--out").unwrap().undo();
        assert!(d.join("x").is_dir());
        // a path through `..`: both directories made are removed
        create_dir_undoable(&d.join("m/../n"), "--out")
            .unwrap()
            .undo();
        assert!(!d.join("m").exists() && !d.join("n").exists());
        // a file written meanwhile keeps its directory and those above it
        let made = create_dir_undoable(&d.join("p/q"), "--out").unwrap();
        std::fs::write(d.join("p/q/f"), "").unwrap();
        made.undo();
        assert!(d.join("p/q/f").is_file());
    }

    #[test]
    fn create_dir_names_the_file_in_the_way() {
        let d = tmp("dir");
        let f = d.join("file");
        std::fs::write(&f, b"x").unwrap();
        let e = create_dir(&f, "--out").unwrap_err().to_string();
        assert!(e.contains("exists and is not a directory"), "{e}");
        let e = create_dir(&f.join("sub/deeper"), "--out")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{} is not a directory", f.display())),
            "{e}"
        );
        create_dir(&d.join("new/nested"), "--out").unwrap();
        assert!(d.join("new/nested").is_dir());
        create_parent(Path::new("plain.vcd"), "--vcd").unwrap();
        let e = output_file(&d, "--events").unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
    }

    /// `newdir/` is refused before any work although no such directory
    /// exists yet (the finished file could not be moved to it at the end).
    #[test]
    fn a_path_ending_in_a_separator_is_not_an_output_file() {
        let d = tmp("trailing");
        let dir = d.join("newdir/");
        let e = output_file(&dir, "-o").unwrap_err().to_string();
        assert!(
            e.contains("names a directory (it ends in `/`, `.` or `..`)"),
            "{e}"
        );
        for name in ["newdir/.", "newdir/..", "newdir/a/.."] {
            let e = output_file(&d.join(name), "-o").unwrap_err().to_string();
            assert!(e.contains("names a directory"), "{name}: {e}");
        }
        for name in [".", ".."] {
            assert!(output_file(Path::new(name), "-o").is_err(), "{name}");
        }
        assert!(!d.join("newdir").exists(), "nothing made");
        output_file(&d.join("newdir/f.bin"), "-o").unwrap();
        let e = output_file(Path::new("-"), "--vcd")
            .unwrap_err()
            .to_string();
        assert!(e.contains("give /dev/stdout"), "{e}");
        output_file(&d.join("-"), "--vcd").unwrap(); // a path, not the bare `-`
    }

    #[test]
    fn two_outputs_of_one_name_are_refused() {
        let p = |s: &str| std::path::PathBuf::from(s);
        let e = distinct_outputs(&[("--events", p("x.out")), ("--vcd", p("./x.out"))]);
        assert!(e.unwrap_err().to_string().contains("name the same file"));
        assert!(distinct_outputs(&[("--events", p("x")), ("--vcd", p("x.part"))]).is_err());
        assert!(distinct_outputs(&[("--events", p("x.bin")), ("--vcd", p("x.vcd"))]).is_ok());
        // through a linked directory, before either file exists
        #[cfg(unix)]
        {
            let d = tmp("linked-dirs");
            std::fs::create_dir(d.join("d1")).unwrap();
            std::os::unix::fs::symlink(d.join("d1"), d.join("d2")).unwrap();
            let e = distinct_outputs(&[
                ("--events", d.join("d1").join("o.jsonl")),
                ("--vcd", d.join("d2").join("o.jsonl")),
            ]);
            assert!(e.is_err(), "linked directories");
            // a link to the other output's (earlier) file
            std::fs::write(d.join("d1").join("o.vcd"), b"old").unwrap();
            std::os::unix::fs::symlink(d.join("d1").join("o.vcd"), d.join("l.vcd")).unwrap();
            assert!(distinct_outputs(&[
                ("--events", d.join("d1").join("o.vcd")),
                ("--vcd", d.join("l.vcd")),
            ])
            .is_err());
        }
    }

    /// An output is taken where it will be written: through a directory
    /// still to be made and `..`, or a link that dangles, it can still be
    /// the input or another output, and is refused before anything is made.
    #[test]
    fn outputs_through_directories_to_be_made_or_dangling_links_are_compared_where_written() {
        let d = tmp("where");
        let canon = std::fs::canonicalize(&*d).unwrap();
        let input = d.join("in.bin");
        std::fs::write(&input, b"input").unwrap();
        assert_eq!(where_written(&d.join("nd/../in.bin")), canon.join("in.bin"));
        assert_eq!(
            where_written(&d.join("a/./b/../../c/d.vcd")),
            canon.join("c/d.vcd")
        );
        assert_eq!(where_written(&d.join("new.vcd")), canon.join("new.vcd"));
        // the `.part` written first counts too
        std::fs::write(d.join("p.part"), b"input").unwrap();
        assert!(refuse_overwrite(&d.join("p.part"), &d.join("nd/../p"), "--vcd").is_err());
        for out in ["nd/../in.bin", "x/y/../../in.bin", "./nd/.././in.bin"] {
            let e = refuse_overwrite(&input, &d.join(out), "--vcd").unwrap_err();
            assert!(
                e.to_string().contains("would overwrite the input file"),
                "{out}: {e}"
            );
        }
        refuse_overwrite(&input, &d.join("nd/in.bin"), "--vcd").unwrap();
        let e = distinct_outputs(&[
            ("--events", d.join("x.vcd")),
            ("--vcd", d.join("nd/../x.vcd")),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("name the same file"), "{e}");
        assert!(
            distinct_outputs(&[("--events", d.join("x")), ("--vcd", d.join("nd/../x.part")),])
                .is_err()
        );
        #[cfg(unix)]
        {
            // a dangling link to where the other output will be written
            std::os::unix::fs::symlink("target.bin", d.join("link.vcd")).unwrap();
            assert_eq!(where_written(&d.join("link.vcd")), canon.join("target.bin"));
            let e = distinct_outputs(&[
                ("--vcd", d.join("link.vcd")),
                ("--events", d.join("target.bin")),
            ])
            .unwrap_err();
            assert!(e.to_string().contains("name the same file"), "{e}");
            // a link to the input, through `..`
            std::os::unix::fs::symlink(&input, d.join("to-in.vcd")).unwrap();
            assert!(refuse_overwrite(&input, &d.join("nd/../to-in.vcd"), "--vcd").is_err());
        }
        assert!(
            !d.join("nd").exists() && !d.join("x").exists(),
            "nothing made"
        );
    }

    /// Paths through `/dev` or `/proc` are written directly, whatever the
    /// shell connected them to (`/dev/stdout` into a regular file must not be
    /// renamed over that file), also through a link of one's own.
    #[cfg(unix)]
    #[test]
    fn dev_and_proc_paths_are_written_directly() {
        for dev in ["/dev/stdout", "/dev/null", "/proc/self/fd/1"] {
            assert_eq!(part_path(Path::new(dev)), Path::new(dev), "{dev}");
            move_into_place(Path::new(dev), "-o").unwrap();
        }
        let d = tmp("devlink");
        let link = d.join("out");
        std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
        assert_eq!(part_path(&link), link);
        // a loop of links is replaced, not followed for ever
        std::os::unix::fs::symlink(d.join("b"), d.join("a")).unwrap();
        std::os::unix::fs::symlink(d.join("a"), d.join("b")).unwrap();
        assert_eq!(part_path(&d.join("a")), d.join("a.part"));
        // /dev/shm is a tmpfs of ordinary files: written through FILE.part
        if Path::new("/dev/shm").is_dir() {
            let f = Path::new("/dev/shm/cpistack-paths-test.vcd");
            assert!(!written_directly(f));
            assert_eq!(
                part_path(f),
                Path::new("/dev/shm/cpistack-paths-test.vcd.part")
            );
        }
    }
}
