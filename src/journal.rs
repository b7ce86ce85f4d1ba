//! A journal: records appended one JSON object per line (JSON Lines) as they finish, each
//! line flushed to the disk before the next, so that an interrupted bench keeps every run
//! it finished and the next one can reuse them. `rdbench run` journals its runs beside the
//! report (`bench_report.json.runs.jsonl`); `rdbench study` also journals each finished
//! bench report.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// The journal of a report written to `out`, under `kind` ("runs", "benches"): the report's
/// file name with `.{kind}.jsonl` appended, in the same directory.
pub fn path_beside(out: &Path, kind: &str) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{kind}.jsonl"));
    out.with_file_name(name)
}

/// An open journal of records of type `T`, appended to.
pub struct Journal<T> {
    path: PathBuf,
    file: File,
    _records: PhantomData<fn(&T)>,
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Open the journal at `path` for appending, creating it if it is not there.
    pub fn open(path: &Path) -> Result<Self, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open the journal {}: {e}", path.display()))?;
        Ok(Journal { path: path.to_path_buf(), file, _records: PhantomData })
    }

    /// Append `record` as one line and wait until it is on the disk.
    pub fn append(&mut self, record: &T) -> io::Result<()> {
        let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.sync_data()
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Every record of the journal at `path` (none when there is no journal). A last line cut
/// short (the process was killed while writing it) is skipped; any other line that does not
/// parse is an error naming the line.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read the journal {}: {e}", path.display())),
    };
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read the journal {}: {e}", path.display()))?;
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() => {} // the write that was interrupted
            Err(e) => {
                return Err(format!(
                    "the journal {} is damaged at line {}: {e} (move it away to start afresh)",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(out)
}

/// Remove the journal at `path` (its report is written); no journal is no error.
pub fn remove(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(format!("cannot remove the journal {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_reads_back_skips_a_cut_last_line_and_names_a_damaged_one() {
        let dir = std::env::temp_dir().join(format!("rdbench-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = path_beside(&dir.join("r.json"), "runs");
        assert_eq!(path.file_name().unwrap(), "r.json.runs.jsonl");
        remove(&path).unwrap();
        assert_eq!(read::<Vec<u32>>(&path).unwrap(), Vec::<Vec<u32>>::new());
        let mut j = Journal::<Vec<u32>>::open(&path).unwrap();
        j.append(&vec![1, 2]).unwrap();
        j.append(&vec![3]).unwrap();
        drop(j);
        // Reopened, it appends after what is there.
        Journal::<Vec<u32>>::open(&path).unwrap().append(&vec![4]).unwrap();
        assert_eq!(read::<Vec<u32>>(&path).unwrap(), vec![vec![1, 2], vec![3], vec![4]]);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"[5, 6").unwrap();
        assert_eq!(read::<Vec<u32>>(&path).unwrap().len(), 3, "a cut last line is skipped");
        f.write_all(b"\n[7]\n").unwrap();
        let e = read::<Vec<u32>>(&path).unwrap_err();
        assert!(e.contains("damaged at line 4"), "{e}");
        remove(&path).unwrap();
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
