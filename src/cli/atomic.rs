//! An output file written whole or not at all: the text goes to `<out>.tmp-<pid>` in the
//! same directory, is flushed to the disk, and is renamed over `<out>`. A full disk or a
//! crash leaves the previous file as it was. The temporary file is created when the command
//! starts, so an output that cannot be written is refused before any training: a folder
//! that does not exist, a path that names a folder, a symbolic link (an output is never
//! written through a link: the link is refused, not followed nor replaced), and anything
//! but a regular file or `/dev/null` (`/dev/full`, a pipe). Two outputs of one command that
//! name the same file, or an output that is one of the command's inputs, are refused too.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What an output's path holds, once checked.
#[derive(Debug, PartialEq)]
pub(crate) enum Dest {
    /// A regular file, or nothing yet: written by a rename.
    File,
    /// `/dev/null`: written in place, never renamed over.
    Null,
}

/// Whether `meta` is `/dev/null`'s device.
fn is_dev_null(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let null = std::fs::metadata("/dev/null");
    meta.file_type().is_char_device() && null.is_ok_and(|n| n.rdev() == meta.rdev())
}

/// The folder `path` is in (`.` for a bare name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Check that `dest` can take an output (see the module's rules), before any work.
pub(crate) fn check_dest(dest: &Path) -> Result<Dest, String> {
    let cannot = |why: &dyn std::fmt::Display| format!("cannot write {}: {why}", dest.display());
    if dest.as_os_str().to_string_lossy().ends_with('/') || dest.file_name().is_none() {
        return Err(cannot(&"it names a folder, not a file"));
    }
    let folder = folder_of(dest);
    if !folder.is_dir() {
        return Err(cannot(&format_args!("the folder {} does not exist", folder.display())));
    }
    match std::fs::symlink_metadata(dest) {
        Ok(m) if m.file_type().is_symlink() => Err(cannot(
            &"it is a symbolic link, and an output is never written through one (name the file itself, or remove \
              the link)",
        )),
        Ok(m) if m.is_dir() => Err(cannot(&"it is a directory")),
        Ok(m) if m.is_file() => Ok(Dest::File),
        Ok(m) if is_dev_null(&m) => Ok(Dest::Null),
        Ok(_) => Err(cannot(&"it is not a regular file (of the special files, only /dev/null takes an output)")),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Dest::File),
        Err(e) => Err(cannot(&e)),
    }
}

/// Where a path leads, for comparing two paths: its folder resolved (`./a` and `a`, a
/// folder reached through a link), then its name; the path itself when its folder cannot be.
fn identity(path: &Path) -> PathBuf {
    match (folder_of(path).canonicalize(), path.file_name()) {
        (Ok(f), Some(name)) => f.join(name),
        _ => path.to_path_buf(),
    }
}

/// Refuse, before any work, two `outputs` that name the same file and an output that is
/// one of the `inputs`; each is `(what names it, path)`, e.g. `("--chart", path)`.
/// `/dev/null` may take any number of outputs.
pub(crate) fn refuse_clashes(outputs: &[(String, &Path)], inputs: &[(String, &Path)]) -> Result<(), String> {
    // Each output by where it leads (linear in the outputs and inputs: a merge may have
    // thousands of each).
    let mut outs: HashMap<PathBuf, (&str, &Path)> = HashMap::new();
    for (flag, path) in outputs.iter().filter(|(_, p)| !std::fs::metadata(p).is_ok_and(|m| is_dev_null(&m))) {
        if let Some((other, _)) = outs.insert(identity(path), (flag, path)) {
            return Err(format!(
                "{other} and {flag} both name {}: each output needs a file of its own; nothing was written",
                path.display()
            ));
        }
    }
    let names: HashSet<&OsStr> = outs.values().filter_map(|(_, p)| p.file_name()).collect();
    for (what, input) in inputs {
        // Only an input with an output's file name can be that output.
        if !input.file_name().is_some_and(|n| names.contains(n)) {
            continue;
        }
        if let Some((flag, path)) = outs.get(&identity(input)) {
            return Err(format!(
                "{flag} names {}, which is also {what}: an output must not overwrite an input of the command; \
                 nothing was written",
                path.display()
            ));
        }
    }
    Ok(())
}

/// A writer whose bytes can be forced to the disk (a file; a failing one in the tests).
pub trait Durable: Write {
    /// Wait until what was written is on the disk.
    fn sync(&mut self) -> io::Result<()>;
}

impl Durable for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_all()
    }
}

/// An output being prepared: its temporary file exists, the destination is untouched.
pub struct AtomicFile<W: Durable = File> {
    dest: PathBuf,
    /// The temporary file; None for a destination written in place.
    tmp: Option<PathBuf>,
    writer: W,
}

impl AtomicFile {
    /// Check that `dest` can be written ([`check_dest`]) and that its folder takes a new
    /// file, by creating its temporary file. `/dev/null` is written in place.
    pub fn create(dest: &Path) -> Result<Self, String> {
        let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", dest.display());
        if check_dest(dest)? == Dest::Null {
            let writer = std::fs::OpenOptions::new().write(true).open(dest).map_err(|e| cannot(&e))?;
            return Ok(AtomicFile { dest: dest.to_path_buf(), tmp: None, writer });
        }
        let mut name = dest.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(format!(".tmp-{}", std::process::id()));
        let tmp = dest.with_file_name(name);
        // Created new (O_EXCL), so a link planted under the temporary name is not followed:
        // a stale one (a process of the same id that died) is removed first.
        let new = || File::options().write(true).create_new(true).open(&tmp);
        let writer = match new() {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&tmp).map_err(|e| cannot(&e))?;
                new()
            }
            other => other,
        }
        .map_err(|e| cannot(&e))?;
        Ok(AtomicFile { dest: dest.to_path_buf(), tmp: Some(tmp), writer })
    }
}

impl<W: Durable> AtomicFile<W> {
    /// Write `contents`, flush them to the disk and rename the file over the destination.
    /// On any failure the temporary file is removed and the destination keeps what it had.
    pub fn commit(mut self, contents: &[u8]) -> Result<(), String> {
        let written = self.writer.write_all(contents).and_then(|_| self.writer.flush());
        let done = match &self.tmp {
            Some(tmp) => written.and_then(|_| self.writer.sync()).and_then(|_| std::fs::rename(tmp, &self.dest)),
            None => written,
        };
        // On failure, dropping `self` removes the temporary file.
        done.map_err(|e| format!("cannot write {}: {e} (the file there, if any, is unchanged)", self.dest.display()))
    }
}

/// An output not committed (an interrupted or failed command) leaves no temporary file.
impl<W: Durable> Drop for AtomicFile<W> {
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    /// A disk that fills up after `room` bytes.
    struct FullDisk {
        room: usize,
    }

    impl Write for FullDisk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "No space left on device"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Durable for FullDisk {
        fn sync(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rdbench-atomic-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_full_disk_leaves_the_previous_report_intact() {
        let d = dir("full");
        let dest = d.join("bench_report.json");
        std::fs::write(&dest, "the previous good report").unwrap();
        let real = AtomicFile::create(&dest).unwrap();
        let tmp = real.tmp.clone().unwrap();
        assert!(tmp.exists(), "the temporary file is created up front");
        let full = AtomicFile { dest: real.dest.clone(), tmp: real.tmp.clone(), writer: FullDisk { room: 10 } };
        let e = full.commit(&[b'x'; 100]).unwrap_err();
        assert!(e.contains("No space left on device") && e.contains("unchanged"), "{e}");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "the previous good report");
        assert!(!tmp.exists(), "the temporary file is removed");
        drop(real);
        // Given up before committing: nothing is left either.
        drop(AtomicFile::create(&dest).unwrap());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn commit_replaces_the_file_and_bad_destinations_are_refused_up_front() {
        let d = dir("ok");
        let dest = d.join("r.json");
        std::fs::write(&dest, "old").unwrap();
        AtomicFile::create(&dest).unwrap().commit(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "no temporary file left");
        let e = AtomicFile::create(&d.join("no-such-dir/r.json")).err().unwrap();
        assert!(e.starts_with("cannot write") && e.contains("no-such-dir/r.json"), "{e}");
        let e = AtomicFile::create(&d).err().unwrap();
        assert!(e.contains("is a directory"), "{e}");
        let e = AtomicFile::create(Path::new(&format!("{}/", d.join("sub").display()))).err().unwrap();
        assert!(e.contains("names a folder, not a file"), "{e}");
        // /dev/null is written in place, never renamed over; no other special file is taken.
        AtomicFile::create(Path::new("/dev/null")).unwrap().commit(b"gone").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        let e = AtomicFile::create(Path::new("/dev/full")).err().unwrap();
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_output_is_never_written_through_a_link() {
        let d = dir("link");
        let (target, dest) = (d.join("target"), d.join("r.json"));
        std::fs::write(&target, "kept").unwrap();
        std::os::unix::fs::symlink(&target, &dest).unwrap();
        let e = AtomicFile::create(&dest).err().unwrap();
        assert!(e.contains("symbolic link"), "{e}");
        // A link planted under the temporary file's name is removed, not followed.
        std::fs::remove_file(&dest).unwrap();
        let tmp = d.join(format!("r.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&target, &tmp).unwrap();
        AtomicFile::create(&dest).unwrap().commit(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&dest).unwrap().file_type().is_symlink());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn two_outputs_on_one_file_or_on_an_input_are_refused() {
        let d = dir("clash");
        let (a, b) = (d.join("a.json"), d.join("b.json"));
        let same = d.join(".").join("a.json");
        fn named<'a>(v: &[(&str, &'a Path)]) -> Vec<(String, &'a Path)> {
            v.iter().map(|(f, p)| (f.to_string(), *p)).collect()
        }
        refuse_clashes(&named(&[("--out", &a), ("--chart", &b)]), &[]).unwrap();
        let e = refuse_clashes(&named(&[("--out", &a), ("--chart", &same)]), &[]).unwrap_err();
        assert!(e.starts_with("--out and --chart both name"), "{e}");
        let e = refuse_clashes(&named(&[("--out", &a)]), &named(&[("the plan (--plan)", &same)])).unwrap_err();
        assert!(e.starts_with("--out names") && e.contains("which is also the plan (--plan)"), "{e}");
        // /dev/null takes any number of outputs.
        let null = Path::new("/dev/null");
        refuse_clashes(&named(&[("--out", null), ("--chart", null)]), &[]).unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }
}
