//! An output file written whole or not at all: the text goes to `<out>.tmp-<pid>` in the
//! same directory, is flushed to the disk, and is renamed over `<out>`. A full disk or a
//! crash leaves the previous file as it was. The temporary file is created when the command
//! starts, so an output that cannot be written is refused before any training.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

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
    /// Check that `dest` can be written (its directory exists and takes a new file, and it
    /// is not a directory) by creating its temporary file. A destination that is not a
    /// regular file (`/dev/null`, a pipe) is written in place: it cannot be renamed over.
    pub fn create(dest: &Path) -> Result<Self, String> {
        let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", dest.display());
        match std::fs::metadata(dest) {
            Ok(m) if m.is_dir() => return Err(cannot(&"it is a directory")),
            Ok(m) if !m.is_file() => {
                let writer = std::fs::OpenOptions::new().write(true).open(dest).map_err(|e| cannot(&e))?;
                return Ok(AtomicFile { dest: dest.to_path_buf(), tmp: None, writer });
            }
            _ => {}
        }
        let mut name = dest.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(format!(".tmp-{}", std::process::id()));
        let tmp = dest.with_file_name(name);
        let writer = File::create(&tmp).map_err(|e| cannot(&e))?;
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
        // /dev/null is written in place, never renamed over.
        AtomicFile::create(Path::new("/dev/null")).unwrap().commit(b"gone").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
