// How this process was started (by mpirun or srun, as one of several ranks?) and which GPU a rank takes.
// Read from the launcher's environment, so the plain binary never initializes MPI.
#pragma once
#include <optional>
#include <string>

namespace normsim::mpi {

// True when a launcher says this process is one of more than one rank: OMPI_COMM_WORLD_SIZE (Open MPI's
// mpirun), PMI_SIZE (MPICH/Hydra, srun --mpi=pmi2), PMIX_SIZE, or SLURM_STEP_NUM_TASKS (srun). A false
// positive is harmless: the distributed driver also runs correctly with one rank.
bool launched_with_ranks();

// This rank's index among all ranks, when the launcher says so (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
// SLURM_PROCID): errors found before MPI starts (a bad config, read by every rank) are printed by rank 0
// only.
std::optional<int> world_rank_from_env();

// This rank's index among the ranks on its node, when the launcher says so (OMPI_COMM_WORLD_LOCAL_RANK,
// MPI_LOCALRANKID, PMI_LOCAL_RANK, SLURM_LOCALID). Read before MPI_Init, so that the GPU can be chosen
// before anything initializes CUDA.
std::optional<int> local_rank_from_env();

// One GPU per rank: makes only the GPU `local_rank % count` visible to this process by narrowing
// CUDA_VISIBLE_DEVICES, which is how the device index reaches the CUDA backend: make_backend("auto" or
// "cuda", threads) takes no device index, and the backend then uses device 0 of what it sees. Must run
// before anything initializes CUDA. Leaves the environment alone when the cluster already gave this
// process one GPU (CUDA_VISIBLE_DEVICES names one device, e.g. Slurm's --gpus-per-task=1) or when the node
// has none (no /dev/nvidiaN). Returns what it chose, for messages and run.json ("" when no GPU).
std::string bind_gpu(int local_rank);

}  // namespace normsim::mpi
